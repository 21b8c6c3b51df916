Feature: M03 — when primary validation or writeback fails, no hook is called
  Only a committed, durably checkpointed receipt of the active plan's effect dispatches.

  @M03
  Scenario: a completion that fails validation never reaches the hooks
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the host returns a completion without a lifecycle adapter
    Then the Turn stops at validation with code "completion_lifecycle_missing"
    And no primary writeback was made
    And no provider was called

  @M03
  Scenario: a writeback that fails to commit never reaches the hooks
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the primary writeback of a completion fails
    Then the Turn stops at the writeback with code "primary_writeback_failed"
    And no primary writeback was made
    And no provider was called

  @M03
  Scenario Outline: a receipt whose step is not committed dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a receipt whose writeback step is only <status> is offered for dispatch
    Then the dispatch is not admitted, with code "source_not_committed"
    And no provider was called
    And the sidecar journal holds no intent

    Examples:
      | status     |
      | prepared   |
      | rejected   |
      | inferred   |
      | prose_only |

  @M03
  Scenario: a receipt without a durable checkpoint dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a receipt that was never durably checkpointed is offered for dispatch
    Then the dispatch is not admitted, with code "source_not_durable"
    And no provider was called

  @M03
  Scenario: a receipt for another effect than the active plan's dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a completion for an effect other than the active plan's
    Then the dispatch is not admitted, with code "effect_mismatch"
    And no provider was called

  @M03
  Scenario: a committed completion does reach the hooks
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" was called 1 time

  @M03
  Scenario: something that is not a receipt dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When something that is not a receipt at all is offered for dispatch
    Then the dispatch is not admitted, with code "source_rejected"
    And no provider was called

  @M03
  Scenario Outline: a receipt with an empty settlement identity dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt with an empty <field> is offered for dispatch
    Then the dispatch is not admitted, at "$.<field>"
    And no provider was called

    Examples:
      | field            |
      | goal_id          |
      | agent_id         |
      | todo_id          |
      | turn_instance_id |

  @M03
  Scenario Outline: a malformed receipt dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a receipt that is <shape> is offered for dispatch
    Then the dispatch is not admitted, with code "source_rejected"
    And no provider was called

    Examples:
      | shape                                         |
      | a list                                        |
      | carrying a value that is not JSON             |
      | a completion carrying a replan transition     |
