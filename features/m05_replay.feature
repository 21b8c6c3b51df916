Feature: M05 — replaying the primary writeback returns the same dispatch receipt, no duplicate intent

  @M05 @smoke
  Scenario: a replayed completion returns the stored receipt without calling the provider
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And the orchestrator replays that writeback 3 times
    Then hook "a.reporter" was called 1 time
    And the replay returned the original receipt for hook "a.reporter" without calling it
    And hook "a.reporter" has exactly one recorded intent
    And the quota was spent exactly once for each committed receipt

  @M05
  Scenario: a hook whose answer changes per call still has one intent after replays
    Given the post-writeback phase is enabled
    And hook "a.drifter" is installed and proposes a different intent on every call
    When the orchestrator commits a replan_recorded writeback
    And the orchestrator replays that writeback 2 times
    Then hook "a.drifter" has exactly one recorded intent
    And hook "a.drifter" has exactly one dispatch identity

  @M05 @smoke
  Scenario Outline: a crash between the primary writeback and the sidecar recovers to one record
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the process crashes at "<point>" during a completion and restarts
    Then hook "a.reporter" has exactly one recorded intent
    And hook "a.reporter" has exactly one dispatch identity
    And the quota was spent exactly once for each committed receipt

    Examples:
      | point                            |
      | primary.after_writeback          |
      | sidecar.before_checkpoint        |
      | sidecar.after_provider_returned  |
      | sidecar.inside_record_transaction |
      | sidecar.after_record             |
      | primary.after_dispatch           |

  @M05
  Scenario: a crash after the first of three hooks returned, a slower one still answering, recovers every hook to one record
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent after a short pause
    And hook "c.reporter" is installed and proposes one intent
    When the process crashes at "sidecar.after_provider_returned" during a completion and restarts
    Then hook "a.reporter" has exactly one recorded intent
    And hook "b.reporter" has exactly one recorded intent
    And hook "c.reporter" has exactly one recorded intent
    And each admitted hook has exactly one dispatch identity and one sidecar record
    And the quota was spent exactly once for each committed receipt

  @M05
  Scenario: a failed hook is retried with the same identity on replay, the recorded one is not
    Given the post-writeback phase is enabled
    And hook "a.flaky" is installed and fails on its first call only
    And hook "b.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And the orchestrator replays that writeback
    Then hook "a.flaky" was retried, called 2 times in all
    And hook "a.flaky" was called at most once per delivery
    And hook "b.reporter" was called 1 time
    And hook "a.flaky" has exactly one dispatch identity
    And hook "a.flaky" has exactly one recorded intent

  @M05
  Scenario: a corrupted sidecar record is reported, never rebuilt or re-run
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And the newest sidecar record is corrupted in storage
    And the orchestrator replays that writeback
    Then the dispatch reports the journal error "journal_record_corrupt"
    And hook "a.reporter" was called 1 time
    And the quota was spent exactly once for each committed receipt

  @M05
  Scenario: a sidecar record altered in storage but still well-formed is never replayed as authentic
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And the newest sidecar record's payload is altered in storage, still well-formed
    And the orchestrator replays that writeback
    Then the replay does not return the altered intent as recorded
    And the dispatch reports the journal error "journal_record_corrupt"
    And hook "a.reporter" was called 1 time
    And the quota was spent exactly once for each committed receipt

  # What a restart recovers is what was committed (RFC §9, §14): the record a dispatch left
  # survives it for either event kind, whatever the provider would answer now.
  @M05
  Scenario Outline: a recorded dispatch of either event kind survives a restart as it was
    Given the post-writeback phase is enabled
    And hook "a.drifter" is installed and proposes a different intent on every call
    When the orchestrator commits a <kind> writeback
    And the process restarts
    Then the record of hook "a.drifter" is still the one its first dispatch left

    Examples:
      | kind            |
      | todo_completed  |
      | replan_recorded |
