Feature: M07 — a sidecar journal changed under the dispatcher is reported, never a primary failure, and never acknowledges a lost record
  An operator's rm, a temp cleaner or a log rotation may change the journal's files while the
  dispatcher has them open. A removed file is put back from the open journal before anything is
  acknowledged; a replaced file or a truncated write-ahead log is reported as journal_write_failed
  and nothing more is acknowledged (later reads report journal_read_failed). Second deliveries count their attempts like any other, so the
  profile's retry bound holds across them too.

  @M07
  Scenario: a sidecar journal removed while open is put back, and every recorded dispatch survives a restart
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And the sidecar journal's file is removed while it is open
    And the orchestrator commits a todo_completed writeback
    Then the outcome of hook "a.reporter" reports 1 attempt, not a replay, recorded
    When the process restarts
    And the orchestrator replays writeback number 1
    And the orchestrator replays writeback number 2
    Then hook "a.reporter" was called 2 times
    And the sidecar journal holds 2 records
    And the primary receipt and the quota-spend eligibility are unchanged

  @M07
  Scenario Outline: a sidecar journal whose file is <changed> while open reports journal_write_failed, never a primary failure
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And the sidecar journal's file is <changed> while it is open
    And the orchestrator commits a todo_completed writeback
    Then the dispatch reports the journal error "journal_write_failed"
    And the outcome of hook "a.reporter" reports 0 attempts, not a replay, not recorded
    When the orchestrator commits a todo_completed writeback
    Then the dispatch reports the journal error "journal_read_failed"
    And hook "a.reporter" was called 1 time, as pwh reads that delivery
    And the primary receipt and the quota-spend eligibility are unchanged
    And the quota was spent exactly once for each committed receipt

    Examples:
      | changed                                |
      | replaced by another database           |
      | left with a truncated write-ahead log  |
      | left with a write-ahead log one byte short |
      | left without its write-ahead log       |
      | left with its write-ahead log replaced by a copy |

  @M07
  Scenario: second deliveries stop at the profile's retry bound too
    Given the post-writeback phase is enabled
    And the profile allows at most 2 attempts per dispatch
    And hook "a.flaky" is installed and raises an error
    When the orchestrator commits a todo_completed writeback
    And a second dispatcher delivers writeback number 1 again
    And a second dispatcher delivers writeback number 1 again
    And a second dispatcher delivers writeback number 1 again
    Then hook "a.flaky" was retried, called 2 times in all
    And hook "a.flaky" ends, past the profile's retry bound, with failure code "dispatch_budget_exhausted"
    And the primary receipt and the quota-spend eligibility are unchanged
