Feature: M08 slots and inputs — a failed hook frees its slot, and each hook is judged on its own input
  Only a result that is accepted takes one of the profile's per-dispatch slots: a hook that raises,
  times out, answers outside its contract or is refused before its call leaves its slot to the
  next hook. Every sidecar record carries its hook's ids, so an id that names a host is refused
  when the hook is installed, and nothing of it reaches the journal.

  @M08
  Scenario Outline: a hook that <fails> leaves its slot to the next hook
    Given the post-writeback phase is enabled
    And the profile allows at most 2 hooks per dispatch
    And hook "a.flaky" is installed and <fails>
    And hook "b.reporter" is installed and proposes one intent
    And hook "c.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.flaky" ends with failure code "<code>"
    And hook "b.reporter" has exactly one recorded intent
    And hook "c.reporter" has exactly one recorded intent
    And the primary receipt and the quota-spend eligibility are unchanged

    Examples:
      | fails                              | code                     |
      | raises an error                    | producer_failed          |
      | does not return within its timeout | producer_timed_out       |
      | returns an invalid result          | result_contract_rejected |

  @M08
  Scenario: a hook refused before its call leaves its slot to the next hook
    Given the post-writeback phase is enabled
    And the profile allows at most 1 hooks per dispatch
    And hook "a.patient" is installed and proposes one intent after a short pause
    And hook "b.reporter" is installed and proposes one intent
    And the profile caps hook timeouts at 1000 ms
    When the orchestrator commits a todo_completed writeback
    Then hook "a.patient" ends with failure code "registration_rejected"
    And hook "a.patient" was never called
    And hook "b.reporter" has exactly one recorded intent

  @M08
  Scenario: with every slot taken by accepted results, the next hook is still stopped uncalled
    Given the post-writeback phase is enabled
    And the profile allows at most 2 hooks per dispatch
    And hook "a.flaky" is installed and raises an error
    And hook "b.reporter" is installed and proposes one intent
    And hook "c.reporter" is installed and answers not applicable
    And hook "d.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "b.reporter" has exactly one recorded intent
    And hook "c.reporter" ends with status "not_applicable"
    And hook "d.reporter" ends with failure code "dispatch_budget_exhausted"
    And hook "d.reporter" was never called

  @M02
  Scenario: a hook id that names a host is rejected at installation, before any provider call
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And a hook whose id names a host is registered
    When the orchestrator commits a todo_completed writeback
    Then the registration of the host-named hook is rejected at its hook id
    And hook "a.reporter" has exactly one recorded intent
    And the sidecar journal holds nothing of the host-named hook
