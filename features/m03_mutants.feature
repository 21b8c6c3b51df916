Feature: M03 — mutants of admissibility: a refused source is refused at the field it breaks, and named
  Written for the mutants that survived the matrix (tests/mutation/survivors.md): the refusal of an
  inadmissible source names the JSON path of the field at fault and the receipt and event kind it
  refused.

  @M03
  Scenario: a receipt that was never durably checkpointed is refused at its checkpoint
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a receipt that was never durably checkpointed is offered for dispatch
    Then hook "a.reporter" was never called
    And the dispatch is not admitted, at "$.durable_checkpoint"
    And the refused dispatch still names receipt number 1 and its event kind

  @M03
  Scenario: a receipt for an effect other than the active plan's is refused at its effect id
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose effect differs from the active plan's effect is offered for dispatch
    Then hook "a.reporter" was never called
    And the dispatch is not admitted, at "$.effect_id"
    And the refused dispatch still names receipt number 1 and its event kind

  @M03
  Scenario: a receipt offered while the phase is disabled is refused and named
    Given the post-writeback phase is disabled
    And hook "a.reporter" is installed and proposes one intent
    When a receipt that was never durably checkpointed is offered for dispatch
    Then hook "a.reporter" was never called
    And the refused dispatch still names receipt number 1 and its event kind
