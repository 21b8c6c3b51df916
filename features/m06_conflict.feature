Feature: M06 — same identity, different payload: the conflict is rejected and the original kept

  @M06 @smoke
  Scenario: a second delivery with a different result is an intent conflict
    Given the post-writeback phase is enabled
    And hook "a.drifter" is installed and proposes a different intent on every call
    When the orchestrator commits a todo_completed writeback
    And a second dispatcher delivers the same dispatch again
    Then hook "a.drifter" ends with failure code "intent_conflict"
    And the journal still holds the original intent for hook "a.drifter"

  @M06
  Scenario: a second delivery with the same result is a no-op returning the original
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And a second dispatcher delivers the same dispatch again
    Then hook "a.reporter" ends with status "proposed"
    And the journal still holds the original intent for hook "a.reporter"
    And hook "a.reporter" has exactly one recorded intent

  @M06
  Scenario: a conflict on one hook leaves the other hook's record alone
    Given the post-writeback phase is enabled
    And hook "a.drifter" is installed and proposes a different intent on every call
    And hook "b.reporter" is installed and proposes one intent
    When the orchestrator commits a replan_recorded writeback
    And a second dispatcher delivers the same dispatch again
    Then hook "a.drifter" ends with failure code "intent_conflict"
    And hook "b.reporter" ends with status "proposed"
    And the sidecar journal holds 2 records

  # The same canonical result (RFC §9): a result that differs only in its key order is a no-op,
  # never a conflict.
  @M06
  Scenario: a second delivery with the same result in another key order is a no-op, not a conflict
    Given the post-writeback phase is enabled
    And hook "a.reporter" proposes the same intent on every call, its keys in a different order each time
    When the orchestrator commits a todo_completed writeback
    And a second dispatcher delivers the same dispatch again
    Then hook "a.reporter" was called 2 times, as pwh reads that delivery
    And hook "a.reporter" ends with status "proposed"
    And the journal still holds the original intent for hook "a.reporter"

  # A conflict is judged on the whole canonical result (RFC §9), not on its first intent.
  @M06
  Scenario: a second delivery whose later intent differs is an intent conflict
    Given the post-writeback phase is enabled
    And hook "a.drifter" is installed and proposes two intents, only the second different on every call
    When the orchestrator commits a replan_recorded writeback
    Then hook "a.drifter" has exactly two recorded intents
    When a second dispatcher delivers the same dispatch again
    Then hook "a.drifter" ends with failure code "intent_conflict"
    And the journal still holds the original intent for hook "a.drifter"
