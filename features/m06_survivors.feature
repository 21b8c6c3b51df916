Feature: M06 — survivors of the mutation campaign: what a conflict reports
  Written for the open survivors of tests/mutation/survivors.md: the conflicting delivery reports
  the original's attempts, that the original is recorded, and the rejection that says why.

  @M06
  Scenario: a conflict reports the recorded original and a rejection coded intent_conflict
    Given the post-writeback phase is enabled
    And hook "a.drifter" is installed and proposes a different intent on every call
    When the orchestrator commits a todo_completed writeback
    And a second dispatcher delivers the same dispatch again
    Then hook "a.drifter" ends with failure code "intent_conflict"
    And the outcome of hook "a.drifter" reports 1 attempt, not a replay, recorded
    And the outcome of hook "a.drifter" carries a rejection with code "intent_conflict"
    And every rejection reported so far has a stable code and a non-empty, public-safe reason

  @M06
  Scenario: a second dispatcher's redelivery of a failing hook reports the attempts on record and the failure
    Given the post-writeback phase is enabled
    And hook "a.flaky" is installed and raises an error
    When the orchestrator commits a todo_completed writeback
    And a second dispatcher delivers the same dispatch again
    Then hook "a.flaky" ends with failure code "producer_failed"
    And the outcome of hook "a.flaky" reports 2 attempts, not a replay, recorded
