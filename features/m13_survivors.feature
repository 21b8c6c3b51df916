Feature: M13 — survivors of the mutation campaign: a private receipt id is refused with a reason that carries nothing private
  Written for the open survivors of tests/mutation/survivors.md: the refusal of a receipt whose own
  id is a credential gives a stable code and a non-empty reason that carries no private value.

  @M13
  Scenario: a receipt whose own id is a credential is refused with a public-safe reason
    Given private values made by Faker are planted in the run
    And the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose own receipt id is a credential is dispatched
    Then the dispatch is not admitted, with code "source_rejected"
    And every rejection reported so far has a stable code and a non-empty, public-safe reason
    And nothing the dispatcher recorded, reported or handed a hook carries a private value

  @M13
  Scenario Outline: a registration with a field named by a private value is rejected without spelling it out
    Given the post-writeback phase is enabled
    And hook "a.reporter" is registered with an extra field named by the private sample "<sample>"
    Then the installation of hook "a.reporter" is rejected with a path that spells out no private key
    And if the registration of hook "a.reporter" was rejected, it was never called

    Examples:
      | sample            |
      | a GitHub token    |
      | an internal host name |
      | an e-mail address |

  @M13
  Scenario Outline: a result keyed by a private value under an open payload schema is rejected without spelling the key out
    Given the post-writeback phase is enabled
    And hook "a.open" is installed for an intent kind whose payload takes any key, and proposes one keyed by the private sample "<sample>"
    When the orchestrator commits a todo_completed writeback
    Then hook "a.open" ends with failure code "result_contract_rejected"
    And the rejection of hook "a.open" points at "$.intents[0].payload[?]"
    And every rejection reported so far has a stable code and a non-empty, public-safe reason
    And the sidecar journal holds no intent

    Examples:
      | sample                |
      | a GitHub token        |
      | an internal host name |

  @M13
  Scenario Outline: a fine-grained GitHub token in an intent is refused on every lane of the scan
    Given the post-writeback phase is enabled
    And hook "a.leaky" is installed and proposes an intent whose detail is a fine-grained GitHub token <lane>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.leaky" ends with failure code "result_contract_rejected"
    And the sidecar journal holds no intent
    And every rejection reported so far has a stable code and a non-empty, public-safe reason

    Examples:
      | lane           |
      | in a sentence  |
      | in a dotted id |
      | alone          |
