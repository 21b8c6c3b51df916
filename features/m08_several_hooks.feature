Feature: M08 — several hooks: stable order, independent budgets, failure isolation

  @M08
  Scenario: hooks run in hook_id order whatever order they were installed in
    Given the post-writeback phase is enabled
    And hook "c.third" is installed and proposes one intent
    And hook "a.first" is installed and proposes one intent
    And hook "b.second" is installed and answers not applicable
    When the orchestrator commits a todo_completed writeback
    Then the hooks were called in the order "a.first, b.second, c.third"
    And the hooks are reported in the order "a.first, b.second, c.third"

  @M08
  Scenario: a failing hook does not use up another hook's intent slot
    Given the post-writeback phase is enabled
    And the profile allows at most 1 intents per dispatch
    And hook "a.flaky" is installed and raises an error
    And hook "b.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.flaky" ends with failure code "producer_failed"
    And hook "b.reporter" has exactly one recorded intent

  @M08
  Scenario: past the profile's per-dispatch intent ceiling a hook gets dispatch_budget_exhausted
    Given the post-writeback phase is enabled
    And the profile allows at most 2 intents per dispatch
    And hook "a.pair" is installed and proposes two intents
    And hook "b.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.pair" has exactly two recorded intents
    And hook "b.reporter" ends with failure code "dispatch_budget_exhausted"
    And the primary receipt and the quota-spend eligibility are unchanged

  @M08
  Scenario: past the profile's hook ceiling the later hooks are not called
    Given the post-writeback phase is enabled
    And the profile allows at most 1 hooks per dispatch
    And hook "a.first" is installed and proposes one intent
    And hook "b.second" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "b.second" ends with failure code "dispatch_budget_exhausted"
    And hook "b.second" was never called

  @M08
  Scenario: a hanging hook does not take the next hook's time
    Given the post-writeback phase is enabled
    And hook "a.sleeper" is installed and does not return within its timeout
    And hook "b.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.sleeper" ends with failure code "producer_timed_out"
    And the Turn gave up on hook "a.sleeper" within its timeout
    And hook "b.reporter" ends with status "proposed"
    And the hooks were called in the order "a.sleeper, b.reporter"

  @M08
  Scenario: no hook sees another hook's result and each gets its own copy of the input
    Given the post-writeback phase is enabled
    And hook "a.mutator" is installed and tries to change its input
    And hook "b.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "b.reporter" saw the source exactly as committed
    And the attempt of hook "a.mutator" to change its input fails it with "producer_failed"

  @M08
  Scenario: a hook that proposes another hook's intent identity cannot decide that hook's outcome
    Given the post-writeback phase is enabled
    And hook "a.copier" is installed and proposes an intent under b.reporter's intent identity
    And hook "b.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "b.reporter" ends with status "proposed"
    And hook "b.reporter" has exactly one recorded intent
    And hook "a.copier" ends with failure code "result_contract_rejected"
