Feature: M09 — an intent's requested write scope is a proposal only
  The scope is recorded as a request for a later, separate admission: the hook gains no authority
  and nothing is executed.

  @M09
  Scenario: a requested write scope is recorded, and the governed admission denies it by default
    Given the post-writeback phase is enabled
    And hook "a.publisher" is installed and proposes an intent requesting write scope report.publish
    When the orchestrator commits a todo_completed writeback
    And the fake scheduler consumes the intent receipts
    Then the intent recorded for hook "a.publisher" requests write scope "report.publish" and claims nothing
    And the governed admission denied the intent with code "write_scope_not_admitted"
    And the sink was never called

  @M09
  Scenario: an admission that allows the scope grants exactly what was requested, and still nothing runs
    Given the post-writeback phase is enabled
    And hook "a.publisher" is installed and proposes an intent requesting write scope report.publish
    When the orchestrator commits a todo_completed writeback
    And the governed admission allows write scope report.publish
    And the fake scheduler consumes the intent receipts
    Then the governed admission admitted the intent
    And the granted scope is exactly "report.publish"
    And the sink was never called

  @M09
  Scenario: an intent that claims new action authority is rejected and not recorded
    Given the post-writeback phase is enabled
    And hook "a.grabber" is installed and proposes an intent that claims new action authority
    When the orchestrator commits a todo_completed writeback
    Then hook "a.grabber" ends with failure code "result_contract_rejected"
    And the sidecar journal holds no intent
    And the fake scheduler received no intent

  @M09
  Scenario: a scope the admission does not allow is denied while an allowed one passes
    Given the post-writeback phase is enabled
    And hook "a.pusher" is installed and proposes an intent requesting write scope repo.push
    When the orchestrator commits a todo_completed writeback
    And the governed admission allows write scope report.publish
    And the fake scheduler consumes the intent receipts
    Then the governed admission denied the intent with code "write_scope_not_admitted"
    And the sink was never called

  @M09
  Scenario: a later intent's requested write scope is recorded as it was proposed
    Given the post-writeback phase is enabled
    And hook "a.publisher" is installed and proposes two intents, only the second requesting write scope report.publish
    When the orchestrator commits a replan_recorded writeback
    Then hook "a.publisher" has exactly two recorded intents
    When the fake scheduler consumes the intent receipts
    Then the governed admission decided on 2 intents and denied only the one requesting a scope, with code "write_scope_not_admitted"
    And the sink was never called
