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

  @M02
  Scenario: a well-formed registration within budget is installed and used
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" is installed
    And hook "a.reporter" ends with status "proposed"
