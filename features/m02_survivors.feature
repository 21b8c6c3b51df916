Feature: M02 — survivors of the mutation campaign: lowered ceilings judge each installed hook on its own
  Written for the open survivors of tests/mutation/survivors.md: when a profile lowers its ceilings
  after installation, each installed registration is re-checked on its own (one within the new
  ceiling keeps running, one over it is refused), and the refusal gives a stable code and a
  non-empty, public-safe reason.

  @M02
  Scenario: after the ceilings drop, the hook over them is refused and the hook within them still runs
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.quick" is registered with its timeout_ms budget at 400
    When the profile then caps hook timeouts at 400 ms
    And the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" ends with failure code "registration_rejected"
    And hook "a.reporter" was never called
    And hook "b.quick" ends with status "proposed"
    And the outcome of hook "a.reporter" carries a rejection with code "registration_rejected"
    And every rejection reported so far has a stable code and a non-empty, public-safe reason

  @M02
  Scenario Outline: after the ceilings drop, the hook over them is refused at any position and for either event kind
    Given the post-writeback phase is enabled
    And hook "<over>" is registered with its timeout_ms budget at 2000
    And hook "<within>" is installed and proposes one intent
    And hook "<other>" is installed and proposes one intent
    When the profile then caps hook timeouts at 1000 ms
    And the orchestrator commits a <kind> writeback
    Then hook "<over>" ends with failure code "registration_rejected"
    And hook "<over>" was never called
    And hook "<within>" ends with status "proposed"
    And hook "<other>" ends with status "proposed"

    Examples:
      | kind            | over   | within  | other   |
      | todo_completed  | a.slow | b.quick | c.quick |
      | todo_completed  | b.slow | a.quick | c.quick |
      | replan_recorded | c.slow | a.quick | b.quick |
