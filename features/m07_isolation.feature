Feature: M07 — a provider that raises, hangs or answers badly fails alone, compactly
  Whatever one hook does, the primary receipt and the quota-spend eligibility stay exactly as
  they would be with no hooks installed, and the other hooks still run.

  @M07
  Scenario Outline: a misbehaving hook is isolated and the primary writeback stands
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.flaky" is installed and <misbehaves>
    And hook "c.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "b.flaky" ends with failure code "<code>"
    And hook "a.reporter" has exactly one recorded intent
    And hook "c.reporter" has exactly one recorded intent
    And hook "b.flaky" has exactly no recorded intents
    And every failure in the journal is a compact stable code
    And the primary receipt and the quota-spend eligibility are unchanged

    Examples:
      | misbehaves                                 | code                     |
      | raises an error                            | producer_failed          |
      | does not return within its timeout         | producer_timed_out       |
      | loops forever without returning            | producer_timed_out       |
      | ends its own process when it runs apart from the host | producer_failed |
      | holds the interpreter lock past its timeout when it runs apart from the host | producer_timed_out |
      | returns an invalid result                  | result_contract_rejected |
      | returns a result over its byte limit       | result_contract_rejected |
      | returns a result over its byte limit in its second intent | result_contract_rejected |
      | proposes an intent for another hook        | result_contract_rejected |
      | returns NaN inside its intent              | result_contract_rejected |
      | returns minus infinity inside its intent   | result_contract_rejected |
      | returns an integer beyond 64 bits          | result_contract_rejected |
      | returns a result over its byte limit once escaped | result_contract_rejected |
      | hands its own input back as the intent payload | result_contract_rejected |
      | returns a value that is not JSON           | result_contract_rejected |
      | returns a result with a non-string key     | result_contract_rejected |
      | returns a list instead of a result         | result_contract_rejected |
      | returns a result nested 200 levels deep    | result_contract_rejected |
      | proposes an intent whose identity is not its digest | result_contract_rejected |
      | proposes an intent of a kind it did not register | result_contract_rejected |
      | proposes an intent whose payload breaks its schema | result_contract_rejected |
      | proposes the same intent twice             | result_contract_rejected |
      | proposes more intents than its budget allows | result_contract_rejected |
      | proposes an intent for another dispatch    | result_contract_rejected |
      | proposes an intent with a larger budget than its own | result_contract_rejected |

  @M07
  Scenario: a hook that never returns ends as timed out and its late answer is never recorded
    Given the post-writeback phase is enabled
    And hook "a.sleeper" is installed and does not return within its timeout
    When the orchestrator commits a replan_recorded writeback
    Then hook "a.sleeper" ends with failure code "producer_timed_out"
    And the Turn gave up on hook "a.sleeper" within its timeout
    And hook "a.sleeper" has exactly no recorded intents
    And the quota was spent exactly once for each committed receipt

  @M07
  Scenario: retries reuse the identity and stop at the profile's retry bound
    Given the post-writeback phase is enabled
    And the profile allows at most 2 attempts per dispatch
    And hook "a.flaky" is installed and raises an error
    When the orchestrator commits a todo_completed writeback
    And the orchestrator replays that writeback 3 times
    Then hook "a.flaky" was called at most once per delivery
    And hook "a.flaky" was retried, called 2 times in all
    And hook "a.flaky" ends, past the profile's retry bound, with failure code "dispatch_budget_exhausted"
    And hook "a.flaky" has exactly one dispatch identity
    And the primary receipt and the quota-spend eligibility are unchanged

  # §10 allows a retry under the same identity or a kept failure: under both, never two intents.
  @M07
  Scenario: one invocation per dispatch, as in the RFC's own registration, still allows a retry
    Given the post-writeback phase is enabled
    And hook "a.flaky" may be called at most 1 time per dispatch and fails on its first call only
    When the orchestrator commits a todo_completed writeback
    And the orchestrator replays that writeback
    Then hook "a.flaky" was called at most once per delivery
    And hook "a.flaky" was retried, called 2 times in all
    And hook "a.flaky" has exactly one dispatch identity
    And hook "a.flaky" has its one intent on record if it was retried, else its failure kept

  @M07
  Scenario: a well-behaved hook leaves the primary writeback exactly as without hooks
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" ends with status "proposed"
    And the primary receipt and the quota-spend eligibility are unchanged

  @M07
  Scenario: a hook that loops forever is given up on at its timeout
    Given the post-writeback phase is enabled
    And hook "a.spinner" is installed and loops forever without returning
    And hook "b.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.spinner" ends with failure code "producer_timed_out"
    And the Turn gave up on hook "a.spinner" within its timeout
    And hook "b.reporter" has exactly one recorded intent

  @M07 @smoke
  Scenario: a sidecar journal that cannot be written is reported, never a primary failure
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And the sidecar journal cannot be written
    When the orchestrator commits a todo_completed writeback
    Then the dispatch reports the journal error "journal_write_failed"
    And the primary receipt and the quota-spend eligibility are unchanged
    And the quota was spent exactly once for each committed receipt

  @M07
  Scenario: after a provider ends its own process, the hooks after it and the next writeback's hooks still run
    Given the post-writeback phase is enabled
    And hook "a.exits" is installed and ends its own process when it runs apart from the host
    And hook "b.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.exits" ends with failure code "producer_failed"
    And hook "b.reporter" ends with status "proposed"
    When the orchestrator commits a todo_completed writeback
    Then hook "a.exits" ends with failure code "producer_failed"
    And hook "b.reporter" ends with status "proposed"
    And hook "b.reporter" was called 2 times
