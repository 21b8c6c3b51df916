Feature: M07 limits — a result's bounds and exact shape, a late answer, a provider's own say
  A result is measured as the UTF-8 bytes of its canonical serialisation: at its hook's
  max_result_bytes it is accepted, one byte more is rejected. An intent has exactly the RFC's
  fields, bound to its hook, capability, dispatch and registered kind, with an identity that
  covers its policy version. An answer that comes after the timeout is never recorded, and a
  provider never writes its own sidecar receipt.

  @M07
  Scenario: a result of exactly max_result_bytes, in multi-byte UTF-8, is accepted
    Given the post-writeback phase is enabled
    And hook "a.exact" may answer at most 16384 bytes and answers a result of exactly 16384 bytes
    When the orchestrator commits a todo_completed writeback
    Then hook "a.exact" ends with status "proposed"
    And hook "a.exact" has exactly the intents it proposed on record

  @M07
  Scenario: a result one UTF-8 byte over max_result_bytes is rejected, though far fewer characters
    Given the post-writeback phase is enabled
    And hook "a.over" may answer at most 16384 bytes and answers a result of exactly 16385 bytes
    And hook "b.reporter" proposes one intent and keeps its answer
    When the orchestrator commits a todo_completed writeback
    Then hook "a.over" ends with failure code "result_contract_rejected"
    And the sidecar record of hook "a.over" is a failure with code "result_contract_rejected" and nothing else
    And hook "b.reporter" has exactly the intents it proposed on record
    And the primary receipt and the quota-spend eligibility are unchanged

  @M07
  Scenario: the intent count is bounded on both sides by the hook's own budget
    Given the post-writeback phase is enabled
    And hook "a.full" may propose at most 3 intents and proposes 3
    And hook "b.over" may propose at most 3 intents and proposes 4
    When the orchestrator commits a todo_completed writeback
    Then hook "a.full" ends with status "proposed"
    And hook "a.full" has exactly the intents it proposed on record
    And hook "b.over" ends with failure code "result_contract_rejected"
    And the sidecar record of hook "b.over" is a failure with code "result_contract_rejected" and nothing else

  @M07
  Scenario: an answer that arrives after its timeout, while the run goes on, is never recorded
    Given the post-writeback phase is enabled
    And hook "a.late" answers 300 ms after its 200 ms timeout has passed
    And hook "b.reporter" proposes one intent and keeps its answer
    When the orchestrator commits a todo_completed writeback
    And the late answer of hook "a.late" has arrived
    Then hook "a.late" ends with failure code "producer_timed_out"
    And the sidecar record of hook "a.late" is a failure with code "producer_timed_out" and nothing else
    And no late answer is on record or reported
    And hook "b.reporter" has exactly the intents it proposed on record
    And the primary receipt and the quota-spend eligibility are unchanged

  @M07
  Scenario Outline: an intent with a field the contract does not have is rejected
    Given the post-writeback phase is enabled
    And hook "a.extra" <extra>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.extra" ends with failure code "result_contract_rejected"
    And the sidecar record of hook "a.extra" is a failure with code "result_contract_rejected" and nothing else

    Examples:
      | extra                                                      |
      | proposes an intent with an extra field "executed_at"       |
      | proposes an intent whose budget has an extra field "max_tokens" |
      | answers a result with an extra field "summary"             |

  @M07
  Scenario Outline: an intent missing one of its fields is rejected, never filled in
    Given the post-writeback phase is enabled
    And hook "a.short" proposes an intent without its "<field>" field
    When the orchestrator commits a todo_completed writeback
    Then hook "a.short" ends with failure code "result_contract_rejected"
    And the sidecar record of hook "a.short" is a failure with code "result_contract_rejected" and nothing else

    Examples:
      | field                       |
      | requested_write_scope       |
      | failure_policy              |
      | grants_new_action_authority |
      | external_write_performed    |
      | operation                   |

  @M07
  Scenario: an intent naming another capability than its hook's is rejected
    Given the post-writeback phase is enabled
    And hook "a.borrower" proposes an intent naming another capability
    When the orchestrator commits a todo_completed writeback
    Then hook "a.borrower" ends with failure code "result_contract_rejected"
    And the sidecar record of hook "a.borrower" is a failure with code "result_contract_rejected" and nothing else

  @M07
  Scenario: an intent of a kind the catalog knows but the hook did not register is rejected
    Given the post-writeback phase is enabled
    And hook "a.kinds" proposes an intent of a known kind it did not register
    When the orchestrator commits a todo_completed writeback
    Then hook "a.kinds" ends with failure code "result_contract_rejected"
    And the sidecar record of hook "a.kinds" is a failure with code "result_contract_rejected" and nothing else

  @M07
  Scenario: an intent whose identity does not cover the policy version it states is rejected
    Given the post-writeback phase is enabled
    And hook "a.versions" proposes an intent that says policy version "weekly_v1" but whose identity was computed under "v0"
    When the orchestrator commits a todo_completed writeback
    Then hook "a.versions" ends with failure code "result_contract_rejected"
    And the sidecar record of hook "a.versions" is a failure with code "result_contract_rejected" and nothing else

  @M07
  Scenario: a provider that answers with a sidecar receipt of its own making is rejected, not recorded as it says
    Given the post-writeback phase is enabled
    And hook "a.forger" answers with a completed sidecar receipt of its own making
    When the orchestrator commits a todo_completed writeback
    Then hook "a.forger" ends with failure code "result_contract_rejected"
    And the sidecar record of hook "a.forger" is a failure with code "result_contract_rejected" and nothing else
    And hook "a.forger" has exactly no recorded intents
