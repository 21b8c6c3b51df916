Feature: M02 — an invalid or over-budget registration is rejected before any provider call
  Core checks the exact field set, bounded token arrays, known kinds, the budget ceilings and the
  isolate policy when a hook is installed, not when it would run.

  @M02
  Scenario Outline: a registration that breaks one rule is rejected at the field it breaks
    Given the post-writeback phase is enabled
    And hook "a.reporter" is registered with <flaw>
    When the orchestrator commits a todo_completed writeback
    Then the registration of hook "a.reporter" is rejected at the field it breaks
    And no provider was called
    And the sidecar journal holds no intent

    Examples:
      | flaw                                       |
      | an unknown event kind                      |
      | an unknown intent kind                     |
      | a phase other than post_writeback          |
      | a command field                            |
      | an import string                           |
      | a callback name                            |
      | a write scope                              |
      | a failure policy other than isolate        |
      | a timeout over the core ceiling            |
      | a result budget over the core ceiling      |
      | a zero invocation budget                   |
      | a read scope for the full writeback payload |
      | duplicate event kinds                      |
      | no event kinds                             |

  @M02
  Scenario: a second registration with the same hook id is rejected and the first stays
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "a.reporter" is registered a second time
    When the orchestrator commits a todo_completed writeback
    Then the registration of hook "a.reporter" is rejected at the field it breaks
    And hook "a.reporter" was called 1 time

  @M02
  Scenario: a timeout over the profile's own ceiling is rejected at installation
    Given the post-writeback phase is enabled
    And the profile caps hook timeouts at 100 ms
    And hook "a.reporter" is registered with a timeout over the core ceiling
    Then the registration of hook "a.reporter" is rejected at the field it breaks
    And no provider was called

  @M02 @smoke
  Scenario: a well-formed registration within budget is installed and used
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" is installed
    And hook "a.reporter" ends with status "proposed"

  @M02
  Scenario: a profile that lowers its ceilings rejects an installed hook before calling it
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the profile then caps hook timeouts at 100 ms
    And the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" ends with failure code "registration_rejected"
    And hook "a.reporter" was never called

  @M02
  Scenario: a provider that is not callable is rejected at installation
    Given the post-writeback phase is enabled
    And hook "a.reporter" is registered with a provider that is not callable
    When the orchestrator commits a todo_completed writeback
    Then the registration of hook "a.reporter" is rejected at the field it breaks
    And the sidecar journal holds no intent

  @M02
  Scenario: an intent kind cannot be registered twice with different payload schemas
    Given the intent kind "synthetic.follow_up" is registered twice with different payload schemas
    Then the intent kind registration is rejected
    And the intent kind registration is rejected at "$.intent_kind"

  @M02
  Scenario: an intent kind's payload schema must itself be a valid JSON Schema
    Given the intent kind "synthetic.report" is registered with a payload schema that is not a schema
    Then the intent kind registration is rejected

  @M02
  Scenario Outline: a registration that is not a JSON object is rejected whole
    Given the post-writeback phase is enabled
    And a registration that is <shape> is offered
    When the orchestrator commits a todo_completed writeback
    Then the offered registration is rejected at "$"
    And no provider was called

    Examples:
      | shape                          |
      | a list                         |
      | an object with a NaN budget    |

  @M02
  Scenario Outline: an intent kind whose payload schema refers to <target> is refused when registered
    Given the intent kind "synthetic.report" is registered with a payload schema whose $ref is <target>
    Then the intent kind registration is rejected
    And the intent kind registration is rejected at "$.payload_schema"

    Examples:
      | target                     |
      | a local pointer to nothing |
      | a remote address           |
      | a relative file            |

  # Kept apart from the outline above so that the lines the mutation survivors cite stay put.
  @M02
  Scenario Outline: a registration with a field the registration does not define is rejected, not normalised
    Given the post-writeback phase is enabled
    And hook "a.reporter" is registered with <flaw>
    When the orchestrator commits a todo_completed writeback
    Then the registration of hook "a.reporter" is rejected at the field it breaks
    And no provider was called
    And the sidecar journal holds no intent

    Examples:
      | flaw                    |
      | an unknown field        |
      | an unknown budget field |
