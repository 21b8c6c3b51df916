Feature: M13 — the public boundary: nothing private is recorded or reported
  Hook inputs carry opaque identities only; results carrying private values are rejected; failure
  receipts carry compact codes, never exception text.

  @M13
  Scenario Outline: an intent carrying a private value is rejected and nothing private is kept
    Given private values made by Faker are planted in the run
    And the post-writeback phase is enabled
    And hook "a.leaky" is installed and proposes an intent carrying <private value>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.leaky" ends with failure code "result_contract_rejected"
    And nothing the dispatcher recorded, reported or handed a hook carries a private value

    Examples:
      | private value            |
      | a private e-mail address |
      | a private URL            |
      | an absolute path         |
      | a credential             |

  @M13
  Scenario: an exception carrying a private path leaves only a compact code
    Given private values made by Faker are planted in the run
    And the post-writeback phase is enabled
    And hook "a.flaky" is installed and raises an error
    When the orchestrator commits a todo_completed writeback
    Then hook "a.flaky" ends with failure code "producer_failed"
    And every failure in the journal is a compact stable code
    And nothing the dispatcher recorded, reported or handed a hook carries a private value

  @M13
  Scenario: a hook that reads only its settlement identity gets no event projection
    Given the post-writeback phase is enabled
    And hook "a.minimal" is installed and reads only its settlement identity
    When the orchestrator commits a todo_completed writeback
    Then hook "a.minimal" was given no event projection
    And hook "a.minimal" has exactly one recorded intent

  @M13
  Scenario: a clean run records and reports nothing private
    Given private values made by Faker are planted in the run
    And the post-writeback phase is enabled
    And the periodic-report capability is installed
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a replan_recorded writeback
    Then nothing the dispatcher recorded, reported or handed a hook carries a private value

  @M13
  Scenario: a receipt whose own id is a credential never reaches a hook, the journal or the outcome
    Given private values made by Faker are planted in the run
    And the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose own receipt id is a credential is dispatched
    Then no hook was handed a planted private value
    And nothing the dispatcher recorded, reported or handed a hook carries a private value
    And the dispatch is not admitted, with code "source_rejected"

  @M13
  Scenario Outline: an input whose boundary cannot be proven is never handed to the hook
    Given private values made by Faker are planted in the run
    And the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose Todo identity is <value> is dispatched
    Then hook "a.reporter" ends with failure code "input_boundary_rejected"
    And hook "a.reporter" was never called
    And nothing the dispatcher recorded, reported or handed a hook carries a private value

    Examples:
      | value                    |
      | an absolute path         |
      | a private e-mail address |
      | task prose               |

  @M13
  Scenario Outline: an input whose boundary cannot be proven reaches no hook, for either event kind and every hook
    Given private values made by Faker are planted in the run
    And the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent
    And hook "c.reporter" is installed and proposes one intent
    When a committed <kind> receipt whose Todo identity is <value> is dispatched
    Then hook "a.reporter" was never handed the unprovable input
    And hook "b.reporter" was never handed the unprovable input
    And hook "c.reporter" was never handed the unprovable input
    And nothing the dispatcher recorded, reported or handed a hook carries a private value

    Examples:
      | kind            | value                    |
      | todo_completed  | an absolute path         |
      | replan_recorded | an absolute path         |
      | replan_recorded | a private e-mail address |
