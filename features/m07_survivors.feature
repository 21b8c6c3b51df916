Feature: M07 — survivors of the mutation campaign: what a hook outcome reports, and why a result is rejected
  Written for the open survivors of tests/mutation/survivors.md: a hook outcome says how many
  attempts are on record and, as booleans, whether it was replayed and whether it is recorded (also
  when the sidecar cannot be written, and no attempt that cannot be counted is made), and every
  rejection of a result gives a stable code and a non-empty, public-safe reason (never judged by its wording).

  @M07
  Scenario: a fresh proposal is reported as one attempt, not a replay, recorded
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" ends with status "proposed"
    And the outcome of hook "a.reporter" reports 1 attempt, not a replay, recorded

  @M07
  Scenario: a retried hook reports both attempts on record
    Given the post-writeback phase is enabled
    And hook "a.flaky" is installed and fails on its first call only
    When the orchestrator commits a todo_completed writeback
    Then the outcome of hook "a.flaky" reports 1 attempt, not a replay, recorded
    When the orchestrator replays that writeback
    Then hook "a.flaky" ends with status "proposed"
    And the outcome of hook "a.flaky" reports 2 attempts, not a replay, recorded

  @M07
  Scenario: when the sidecar cannot be written, the outcome names its receipt and no hook reads as recorded
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.broken" is installed and raises an error
    And the sidecar journal cannot be written
    When the orchestrator commits a todo_completed writeback
    Then the dispatch reports the journal error "journal_write_failed"
    And the dispatch that reported the journal error still names its receipt and event kind
    And the outcome of hook "a.reporter" reports 0 attempts, not a replay, not recorded
    And the outcome of hook "b.broken" reports 0 attempts, not a replay, not recorded
    And the primary receipt and the quota-spend eligibility are unchanged

  @M07
  Scenario Outline: a rejected result gives a stable code and a non-empty, public-safe reason
    Given the post-writeback phase is enabled
    And hook "a.broken" is installed and <behaviour>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.broken" ends with failure code "result_contract_rejected"
    And the outcome of hook "a.broken" carries a rejection with code "result_contract_rejected"
    And every rejection reported so far has a stable code and a non-empty, public-safe reason

    Examples:
      | behaviour                                            |
      | returns a list instead of a result                   |
      | proposes an intent with a larger budget than its own |
      | proposes the same intent twice                       |
      | proposes an intent for another hook                  |
      | returns an invalid result                            |

  @M07
  Scenario: when the sidecar fails at the write that ends a dispatch, the outcome names its receipt and reads as not recorded
    Given the post-writeback phase is enabled
    And the profile allows at most 1 attempts per dispatch
    And hook "a.flaky" is installed and raises an error
    When the orchestrator commits a todo_completed writeback
    Then hook "a.flaky" ends with failure code "producer_failed"
    When the sidecar journal can no longer be written
    And the orchestrator replays that writeback
    Then hook "a.flaky" was called at most once per delivery
    And the dispatch reports the journal error "journal_write_failed"
    And the dispatch that reported the journal error still names its receipt and event kind
    And the outcome of hook "a.flaky" reports 1 attempt, not a replay, not recorded
