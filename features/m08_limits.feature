Feature: M08 limits — per-dispatch ceilings on both sides, and hooks that never reach each other
  The profile's per-dispatch ceilings (hooks, result bytes) admit a dispatch exactly at the
  ceiling and stop the hook that would pass it. No hook sees another's result, and one hook's
  failure, or its meddling, never changes another hook's record.

  @M08
  Scenario: exactly at the profile's hook ceiling every hook runs; the next one is stopped
    Given the post-writeback phase is enabled
    And the profile allows at most 2 hooks per dispatch
    And hook "a.first" proposes one intent and keeps its answer
    And hook "b.second" proposes one intent and keeps its answer
    And hook "c.third" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.first" has exactly the intents it proposed on record
    And hook "b.second" has exactly the intents it proposed on record
    And hook "c.third" ends with failure code "dispatch_budget_exhausted"
    And hook "c.third" was never called

  @M08
  Scenario: results filling the profile's per-dispatch byte ceiling exactly are all accepted
    Given the post-writeback phase is enabled
    And the profile allows at most 2000 result bytes per dispatch
    And hook "a.half" may answer at most 16384 bytes and answers a result of exactly 1000 bytes
    And hook "b.half" may answer at most 16384 bytes and answers a result of exactly 1000 bytes
    When the orchestrator commits a todo_completed writeback
    Then hook "a.half" has exactly the intents it proposed on record
    And hook "b.half" has exactly the intents it proposed on record

  @M08
  Scenario: the result that would pass the per-dispatch byte ceiling by one byte is not accepted
    Given the post-writeback phase is enabled
    And the profile allows at most 1999 result bytes per dispatch
    And hook "a.half" may answer at most 16384 bytes and answers a result of exactly 1000 bytes
    And hook "b.half" may answer at most 16384 bytes and answers a result of exactly 1000 bytes
    When the orchestrator commits a todo_completed writeback
    Then hook "a.half" has exactly the intents it proposed on record
    And hook "b.half" ends with failure code "dispatch_budget_exhausted"
    And hook "b.half" has exactly no recorded intents
    And the primary receipt and the quota-spend eligibility are unchanged

  @M08
  Scenario: no hook is given anything of an earlier hook's result
    Given the post-writeback phase is enabled
    And hook "a.first" proposes one intent and keeps its answer
    And hook "b.second" proposes one intent and keeps its answer
    When the orchestrator commits a todo_completed writeback
    Then hook "b.second" was given nothing of hook "a.first"'s result
    And hook "b.second" was given exactly the RFC input for that writeback

  @M08
  Scenario: a later hook's failure leaves the earlier hook's record exactly as proposed
    Given the post-writeback phase is enabled
    And hook "a.reporter" proposes one intent and keeps its answer
    And hook "b.flaky" is installed and raises an error
    When the orchestrator commits a todo_completed writeback
    Then hook "b.flaky" ends with failure code "producer_failed"
    And the sidecar record of hook "a.reporter" holds exactly what it proposed, with no failure

  @M08
  Scenario: a hook that changes another hook's answer after it was given cannot change the record
    Given the post-writeback phase is enabled
    And hook "a.reporter" proposes one intent and keeps its answer
    And hook "b.meddler" changes the answer hook "a.reporter" kept, 300 ms after it is called
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" has exactly the intents it proposed on record
    And the sidecar record of hook "a.reporter" holds exactly what it proposed, with no failure

  @M08
  Scenario: the per-dispatch byte ceiling counts every earlier result, not only the last one
    Given the post-writeback phase is enabled
    And the profile allows at most 2999 result bytes per dispatch
    And hook "a.third" may answer at most 16384 bytes and answers a result of exactly 1000 bytes
    And hook "b.third" may answer at most 16384 bytes and answers a result of exactly 1000 bytes
    And hook "c.third" may answer at most 16384 bytes and answers a result of exactly 1000 bytes
    When the orchestrator commits a todo_completed writeback
    Then hook "a.third" has exactly the intents it proposed on record
    And hook "b.third" has exactly the intents it proposed on record
    And hook "c.third" ends with failure code "dispatch_budget_exhausted"
    And hook "c.third" has exactly no recorded intents

  @M08
  Scenario: the per-dispatch intent ceiling counts every earlier hook's intents, not only the last one's
    Given the post-writeback phase is enabled
    And the profile allows at most 2 intents per dispatch
    And hook "a.first" proposes one intent and keeps its answer
    And hook "b.second" proposes one intent and keeps its answer
    And hook "c.third" proposes one intent and keeps its answer
    When the orchestrator commits a todo_completed writeback
    Then hook "a.first" has exactly the intents it proposed on record
    And hook "b.second" has exactly the intents it proposed on record
    And hook "c.third" ends with failure code "dispatch_budget_exhausted"
    And hook "c.third" has exactly no recorded intents
