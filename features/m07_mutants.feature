Feature: M07 — mutants of the result check: each broken intent is rejected at the field it breaks
  Written for the mutants that survived the matrix (tests/mutation/survivors.md): the general result
  check names the field each rejection is about, and a valid result that only the general path can
  judge (its objects are dict subclasses) is recorded like any other.

  @M07
  Scenario Outline: an invalid result is rejected at the field it breaks
    Given the post-writeback phase is enabled
    And hook "a.broken" is installed and <behaviour>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.broken" ends with failure code "result_contract_rejected"
    And the rejection of hook "a.broken" points at "<path>"
    And the primary receipt and the quota-spend eligibility are unchanged

    Examples:
      | behaviour                                            | path |
      | proposes an intent for another hook                  | $.intents[0].hook_id |
      | proposes an intent for another dispatch              | $.intents[0].source_dispatch_id |
      | proposes an intent whose identity is not its digest  | $.intents[0].intent_id |
      | proposes an intent of a kind it did not register     | $.intents[0].intent_kind |
      | proposes an intent whose payload breaks its schema   | $.intents[0].payload.unexpected_field |
      | proposes an intent with a larger budget than its own | $.intents[0].budget.max_result_bytes |
      | proposes more intents than its budget allows         | $.intents |
      | returns a list instead of a result                   | $ |
      | proposes the same intent twice                       | $.intents[1].intent_id |
      | proposes an intent that claims an external write     | $.intents[0].external_write_performed |
      | proposes an intent that claims new action authority  | $.intents[0].grants_new_action_authority |
      | returns an invalid result                            | $.intents |
      | returns NaN inside its intent                        | $.intents[0].payload.detail |
      | returns a result with a non-string key               | $ |
      | returns an integer beyond 64 bits                    | $.intents[0].payload.detail |
      | returns a value that is not JSON                     | $.intents[0].payload.detail |

  @M07
  Scenario: a valid result behind read-only views is judged by the general check and recorded
    Given the post-writeback phase is enabled
    And hook "a.viewed" is installed and proposes one intent behind read-only views
    When the orchestrator commits a todo_completed writeback
    Then the intent of hook "a.viewed" is recorded as proposed, its clean sample kept
    And hook "a.viewed" has exactly one recorded intent
    And hook "a.viewed" has exactly one dispatch identity
