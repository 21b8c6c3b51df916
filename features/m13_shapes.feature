Feature: M13 — a private value is refused wherever the payload's JSON holds it, and nothing public is
  Written for the open survivors of tests/mutation/survivors.md: under a payload schema that takes any
  JSON, only the public-boundary scan stands between a hook's result and the journal. Each shape puts a
  value on one lane of the scan's walk, and the rejection names the field that holds it; shapes with
  nothing private are recorded. A secret kept out of the journal is §9's and §12 M13's; that a field named
  HOME holds an environment value, what is kept as public, and the nesting limit's number (§10 bounds
  depth with no number) are pwh's readings (profile): an implementation may refuse or bound more.

  @M13
  Scenario Outline: a private value in an open payload is refused at the field that holds it
    Given the post-writeback phase is enabled
    And hook "a.open" is installed for an intent kind whose payload takes any JSON, and proposes <shape>
    When the orchestrator commits a todo_completed writeback
    Then <judged>, hook "a.open" ends with failure code "result_contract_rejected"
    And the rejection of hook "a.open" points at "<path>"
    And <judged>, the sidecar journal holds no intent

    Examples:
      | shape                                                  | path                               | judged              |
      | a word under a secret-named key                        | $.intents[0].payload.api_key       | as the RFC requires |
      | a number under a secret-named key                      | $.intents[0].payload.api_key       | as the RFC requires |
      | a word after a null in a list under a secret-named key | $.intents[0].payload.api_key[1]    | as the RFC requires |
      | a word in an object under a secret-named key           | $.intents[0].payload.api_key.inner | as the RFC requires |
      | a value under an environment variable's name           | $.intents[0].payload.HOME          | by pwh's reading    |
      | a GitHub token under a key that is not an identifier   | $.intents[0].payload['note-ref']   | as the RFC requires |
      | a GitHub token in a list in a list                     | $.intents[0].payload.notes[0][1]   | as the RFC requires |

  @M13
  Scenario Outline: an open payload that carries nothing private is recorded
    Given the post-writeback phase is enabled
    And hook "a.open" is installed for an intent kind whose payload takes any JSON, and proposes <shape>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.open" ends with its intent recorded or in a compact isolated failure
    And by pwh's reading, hook "a.open" ends with status "proposed", its one intent recorded

    Examples:
      | shape                                            |
      | a placeholder in a list under a secret-named key |
      | nulls and booleans under a secret-named key      |
      | a dotted field name as a key                     |

  @M07
  Scenario Outline: an open payload is judged by the nesting limit exactly at its edge
    Given the post-writeback phase is enabled
    And hook "a.open" is installed for an intent kind whose payload takes any JSON, and proposes <shape>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.open" ends with its intent recorded or in a compact isolated failure, the primary receipt unchanged
    And by pwh's reading, hook "a.open" ends with <end>
    Examples:
      | shape                                                         | end                                        |
      | a word nested 60 lists deep, at the nesting limit             | status "proposed", its one intent recorded |
      | a word nested 61 lists deep, one level past the nesting limit | failure code "result_contract_rejected"    |

  @M13
  Scenario: a receipt whose fact refs are ids shaped like host names is handed to the hook as it is
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose fact refs are ids shaped like host names is dispatched
    Then hook "a.reporter" ends with its intent recorded or in a compact isolated failure
    And by pwh's reading, hook "a.reporter" ends with status "proposed", its one intent recorded
