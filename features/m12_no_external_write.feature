Feature: M12 — no network or sink call before separate governed admission

  @M12
  Scenario: an intent claiming an external write is rejected and nothing is called
    Given the post-writeback phase is enabled
    And hook "a.writer" is installed and proposes an intent that claims an external write
    When the orchestrator commits a todo_completed writeback
    Then hook "a.writer" ends with failure code "result_contract_rejected"
    And the sidecar journal holds no intent
    And the sink was never called
    And no outbound network connection was attempted

  @M12
  Scenario: recorded intents are proposals: the sink and the network stay untouched end to end
    Given the post-writeback phase is enabled
    And a segment closes after 1 completed Todos
    And the periodic-report capability is installed
    And hook "a.publisher" is installed and proposes an intent requesting write scope report.publish
    When the orchestrator commits a todo_completed writeback
    And the orchestrator commits a replan_recorded writeback
    And the fake scheduler consumes the intent receipts
    Then the sink was never called
    And no outbound network connection was attempted

  @M12
  Scenario: the scheduler stops at the reducer even for an admitted intent
    Given the post-writeback phase is enabled
    And the periodic-report capability is installed
    When the orchestrator commits a replan_recorded writeback
    And the fake scheduler consumes the intent receipts
    Then the governed admission admitted the intent
    And the sink was never called
