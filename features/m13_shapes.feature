Feature: M13 — a private value is refused wherever the payload's JSON holds it, and nothing public is
  Written for the open survivors of tests/mutation/survivors.md: under a payload schema that takes any
  JSON, only the public-boundary scan stands between a hook's result and the journal. Each shape puts a
  value on one lane of the scan's walk (a secret-named key's value as a word, a number, a list item
  after a null, a nested object; an environment variable's name; a key that is not an identifier;
  lists in lists), and the rejection names the field that holds it. Shapes that carry nothing private
  (a placeholder, nulls and booleans under a secret-named key, a dotted field name) are recorded.

  @M13
  Scenario Outline: a private value in an open payload is refused at the field that holds it
    Given the post-writeback phase is enabled
    And hook "a.open" is installed for an intent kind whose payload takes any JSON, and proposes <shape>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.open" ends with failure code "result_contract_rejected"
    And the rejection of hook "a.open" points at "<path>"
    And the sidecar journal holds no intent

    Examples:
      | shape                                                   | path                                 |
      | a word under a secret-named key                         | $.intents[0].payload.api_key         |
      | a number under a secret-named key                       | $.intents[0].payload.api_key         |
      | a word after a null in a list under a secret-named key  | $.intents[0].payload.api_key[1]      |
      | a word in an object under a secret-named key            | $.intents[0].payload.api_key.inner   |
      | a value under an environment variable's name            | $.intents[0].payload.HOME            |
      | a GitHub token under a key that is not an identifier    | $.intents[0].payload['note-ref']     |
      | a GitHub token in a list in a list                      | $.intents[0].payload.notes[0][1]     |

  @M13
  Scenario Outline: an open payload that carries nothing private is recorded
    Given the post-writeback phase is enabled
    And hook "a.open" is installed for an intent kind whose payload takes any JSON, and proposes <shape>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.open" ends with status "proposed"
    And hook "a.open" has exactly one recorded intent

    Examples:
      | shape                                             |
      | a placeholder in a list under a secret-named key  |
      | nulls and booleans under a secret-named key       |
      | a dotted field name as a key                      |

  @M07
  Scenario Outline: an open payload is judged by the nesting limit exactly at its edge
    Given the post-writeback phase is enabled
    And hook "a.open" is installed for an intent kind whose payload takes any JSON, and proposes <shape>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.open" ends with <end>

    Examples:
      | shape                                                        | end                                  |
      | a word nested 60 lists deep, at the nesting limit            | status "proposed"                    |
      | a word nested 61 lists deep, one level past the nesting limit | failure code "result_contract_rejected" |

  @M13
  Scenario: a receipt whose fact refs are ids shaped like host names is handed to the hook as it is
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose fact refs are ids shaped like host names is dispatched
    Then hook "a.reporter" ends with status "proposed"
    And hook "a.reporter" has exactly one recorded intent
