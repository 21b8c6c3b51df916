Feature: M04 — a committed writeback gives exactly one dispatch identity per admitted hook

  @M04
  Scenario: two admitted hooks each get one identity and one sidecar record
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.reporter" is installed and answers not applicable
    When the orchestrator commits a todo_completed writeback
    Then each admitted hook has exactly one dispatch identity and one sidecar record
    And hook "a.reporter" ends with status "proposed"
    And hook "b.reporter" ends with status "not_applicable"

  @M04
  Scenario: a hook registered only for replans is not admitted for a completion
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed for todo_completed writebacks only
    And hook "b.replans" is installed for replan_recorded writebacks only
    When the orchestrator commits a todo_completed writeback
    Then hook "b.replans" was never called
    And each admitted hook has exactly one dispatch identity and one sidecar record

  @M04
  Scenario: a plain progress writeback is not a post-writeback event and dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a plain progress writeback
    Then the dispatch is not admitted, with code "not_a_post_writeback_event"
    And no provider was called

  @M04
  Scenario: operator post_writeback_actions are never executed nor treated as registrations
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt carrying operator post_writeback_actions is dispatched
    Then hook "a.reporter" was called 1 time
    And the sidecar journal holds 1 records
    And no outbound network connection was attempted

  @M04
  Scenario: a lost diagnostic rollout event changes nothing and no hook runs inside its append
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the diagnostic rollout-event log fails on every append
    And the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" has exactly one recorded intent
    And no hook ran inside the rollout-event append
    And the primary receipt and the quota-spend eligibility are unchanged

  @M04
  Scenario: an intent with a fractional value is recorded under its one identity
    Given the post-writeback phase is enabled
    And hook "a.scorer" is installed and proposes an intent with a fractional score
    When the orchestrator commits a todo_completed writeback
    And the orchestrator replays that writeback
    Then hook "a.scorer" has exactly one recorded intent
    And hook "a.scorer" has exactly one dispatch identity
