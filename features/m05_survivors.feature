Feature: M05 — survivors of the mutation campaign: what a replay and a journal error report
  Written for the open survivors of tests/mutation/survivors.md: a replay reports the attempts on
  record and that it is a replay, and a dispatch that cannot read its journal still names the
  receipt and event kind it was dispatching.

  @M05
  Scenario: a replay is reported as a replay of the one recorded attempt
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And the orchestrator replays that writeback
    Then the replay returned the original receipt for hook "a.reporter" without calling it
    And the outcome of hook "a.reporter" reports 1 attempt, a replay, recorded

  @M05
  Scenario: a dispatch that meets a corrupted record still names its receipt and event kind
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And the newest sidecar record is corrupted in storage
    And the orchestrator replays that writeback
    Then the dispatch reports the journal error "journal_record_corrupt"
    And the dispatch that reported the journal error still names its receipt and event kind
