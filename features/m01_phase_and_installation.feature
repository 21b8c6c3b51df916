Feature: M01 — a disabled phase or an absent capability calls no provider
  The post-writeback phase is off unless the execution profile turns it on, and only
  installed (and allowlisted) hooks are ever called.

  @M01 @smoke
  Scenario: with the phase disabled, a committed completion calls no provider
    Given the post-writeback phase is disabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then no provider was called
    And the sidecar journal holds no intent
    And the primary receipt and the quota-spend eligibility are unchanged

  @M01
  Scenario: with no capability installed, nothing is dispatched
    Given the post-writeback phase is enabled
    And no capability is installed
    When the orchestrator commits a replan_recorded writeback
    Then no provider was called
    And the sidecar journal holds no intent

  @M01
  Scenario: a hook left off the profile allowlist is never called
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent
    And only hook "b.reporter" is on the profile allowlist
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" was never called
    And hook "b.reporter" has exactly one recorded intent

  @M01
  Scenario: the allowlist admits the hook it names, not the other hooks of its capability
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "a.second" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent
    And only hook "a.reporter" is on the profile allowlist
    When the orchestrator commits a todo_completed writeback
    Then hook "a.second" was never called
    And hook "b.reporter" was never called
    And hook "a.reporter" has exactly one recorded intent

  @M01
  Scenario: an empty allowlist admits no hook
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And the profile allowlist is empty
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" was never called
    And the sidecar journal holds no intent

  @M01
  Scenario: with the phase enabled, the installed hook is called once
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" was called 1 time
    And hook "a.reporter" has exactly one recorded intent

  @M01
  Scenario Outline: with the phase disabled, a committed writeback of either event kind calls no provider
    Given the post-writeback phase is disabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a <kind> writeback
    Then no provider was called
    And the sidecar journal holds no intent
    And the primary receipt and the quota-spend eligibility are unchanged

    Examples:
      | kind            |
      | todo_completed  |
      | replan_recorded |

  @M01
  Scenario Outline: the allowlist admits only the hook it names, for either event kind
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "a.second" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent
    And only hook "a.reporter" is on the profile allowlist
    When the orchestrator commits a <kind> writeback
    Then hook "a.second" was never called
    And hook "b.reporter" was never called
    And hook "a.reporter" has exactly one recorded intent

    Examples:
      | kind            |
      | todo_completed  |
      | replan_recorded |

  @M01
  Scenario Outline: an empty allowlist admits no hook, for either event kind
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And the profile allowlist is empty
    When the orchestrator commits a <kind> writeback
    Then hook "a.reporter" was never called
    And the sidecar journal holds no intent

    Examples:
      | kind            |
      | todo_completed  |
      | replan_recorded |
