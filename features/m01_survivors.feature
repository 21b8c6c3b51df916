Feature: M01 — survivors of the mutation campaign: a disabled phase says why nothing ran
  Written for the open survivors of tests/mutation/survivors.md: a committed completion dispatched
  while the phase is disabled is refused with the phase's code, and the refusal gives a non-empty,
  public-safe reason.

  @M01
  Scenario: with the phase disabled, the refusal gives a code and a reason
    Given the post-writeback phase is disabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then no provider was called
    And the dispatch is not admitted, with code "phase_disabled"
    And every rejection reported so far has a stable code and a non-empty, public-safe reason
