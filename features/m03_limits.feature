Feature: M03 limits — only a committed, durable receipt of the active effect dispatches
  Any step status but committed, any durable checkpoint but a proven one, and an empty effect
  identity dispatch nothing: no provider call and no sidecar record.

  @M03
  Scenario Outline: a receipt whose writeback step is anything but committed dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a receipt whose writeback step is "<status>" is offered for dispatch
    Then the dispatch is not admitted and nothing is recorded
    And no provider was called

    Examples:
      | status           |
      | appended         |
      | receipt_repaired |
      | Committed        |
      | committing       |

  @M03
  Scenario Outline: a receipt whose durable checkpoint is not proven dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose durable checkpoint is <value> is offered for dispatch
    Then the dispatch is not admitted and nothing is recorded
    And no provider was called

    Examples:
      | value         |
      | missing       |
      | the text true |
      | the number 1  |

  @M03
  Scenario: a receipt with an empty effect identity dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt with an empty effect identity is offered for dispatch
    Then the dispatch is not admitted and nothing is recorded
    And no provider was called

  @M03
  Scenario Outline: a receipt of either event kind that is not committed or not durable dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When <offered> is offered for dispatch
    Then the dispatch is not admitted and nothing is recorded
    And no provider was called

    Examples:
      | kind            | offered                                                         |
      | todo_completed  | a todo_completed receipt whose writeback step is "prepared"     |
      | replan_recorded | a replan_recorded receipt whose writeback step is "prepared"    |
      | replan_recorded | a replan_recorded receipt whose writeback step is "Committed"   |
      | todo_completed  | a committed todo_completed receipt that is not durably checkpointed |
      | replan_recorded | a committed replan_recorded receipt that is not durably checkpointed |

  @M03
  Scenario: a receipt refused once is refused again on every later delivery
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a receipt whose writeback step is "prepared" is offered for dispatch
    And the same receipt, its writeback step still "prepared", is offered again 2 times
    Then the dispatch is not admitted and nothing is recorded
    And no provider was called
