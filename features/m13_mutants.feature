Feature: M13 — mutants of the boundary scanner: each kind of private value, and texts that are public
  Written for the mutants that survived the matrix (tests/mutation/survivors.md): every rule of the
  public-boundary scan is met by a text it alone catches, on each lane of the scan (bare ids, dotted ids,
  prose); texts the reference reads as public are recorded. Each row says how its outcome is judged: the
  RFC names what it carries (§7, §9, §12 M13), or only pwh's reading refuses it (profile).

  @M13
  Scenario Outline: an intent whose detail carries a private value is rejected, naming what it found
    Given the post-writeback phase is enabled
    And hook "a.leaky" is installed and proposes an intent whose detail is the private sample "<sample>"
    When the orchestrator commits a todo_completed writeback
    Then <judged>, hook "a.leaky" ends with failure code "result_contract_rejected"
    And the rejection of hook "a.leaky" names the kind of the private sample "<sample>"
    And nothing the dispatcher recorded, reported or handed a hook carries a private value

    Examples:
      | sample                                    | judged              |
      | an ftp address                            | as the RFC requires |
      | a schema address beside a private address | as the RFC requires |
      | a www address                             | by pwh's reading    |
      | an upper-case www address                 | by pwh's reading    |
      | an e-mail address                         | as the RFC requires |
      | a posix path                              | as the RFC requires |
      | a windows path                            | as the RFC requires |
      | a windows share                           | as the RFC requires |
      | a home directory by tilde                 | as the RFC requires |
      | a home directory after a semicolon        | as the RFC requires |
      | a mac home directory after a semicolon    | as the RFC requires |
      | the root home after a semicolon           | as the RFC requires |
      | an AWS access key                         | as the RFC requires |
      | an AWS session key                        | as the RFC requires |
      | a GitHub token                            | as the RFC requires |
      | a Slack token                             | as the RFC requires |
      | an API secret key                         | as the RFC requires |
      | a Google API key                          | as the RFC requires |
      | a JSON web token                          | as the RFC requires |
      | a private key block                       | by pwh's reading    |
      | a bearer token                            | as the RFC requires |
      | an upper-case bearer token                | as the RFC requires |
      | an authorization header                   | by pwh's reading    |
      | an upper-case authorization header        | by pwh's reading    |
      | a password assignment                     | as the RFC requires |
      | an api key field with a symbol            | as the RFC requires |
      | a quoted token field                      | as the RFC requires |
      | an IPv4 address                           | by pwh's reading    |
      | a link-local IPv6 address                 | by pwh's reading    |
      | a full IPv6 address                       | by pwh's reading    |
      | an internal host name                     | as the RFC requires |
      | an internal host name in a sentence       | as the RFC requires |
      | a bare IPv4 address                       | by pwh's reading    |
      | a bare www address                        | by pwh's reading    |
      | a mixed-case www address                  | by pwh's reading    |
      | a bare loopback host name                 | by pwh's reading    |
      | a bare GitHub token in a dotted id        | as the RFC requires |
      | a bare AWS access key                     | as the RFC requires |
      | a bare Google API key                     | as the RFC requires |
      | a Slack token in a sentence               | as the RFC requires |
      | an API secret key in a sentence           | as the RFC requires |
      | a GitHub token in a sentence              | as the RFC requires |
      | a JSON web token in a sentence            | as the RFC requires |
      | a client secret assignment                | as the RFC requires |
      | a passphrase field with a symbol          | as the RFC requires |
      | a human line                              | as the RFC requires |
      | an AI line                                | as the RFC requires |
      | a system line                             | as the RFC requires |
      | a tool role field                         | by pwh's reading    |
      | an end-of-turn marker                     | as the RFC requires |
      | a user line                               | as the RFC requires |
      | an assistant line                         | as the RFC requires |
      | a role field                              | by pwh's reading    |
      | chat markup                               | by pwh's reading    |
      | an instruction marker                     | as the RFC requires |
      | a system prompt marker                    | as the RFC requires |
      | a traceback header                        | as the RFC requires |
      | a traceback frame                         | as the RFC requires |
      | an exception message                      | as the RFC requires |
      | a Java exception message                  | as the RFC requires |
      | a timestamped log line                    | as the RFC requires |
      | a bracketed log level                     | as the RFC requires |
      | a shell prompt                            | as the RFC requires |
      | a root shell prompt                       | as the RFC requires |
      | a python prompt                           | as the RFC requires |
      | an environment assignment                 | as the RFC requires |
      | an environment expansion                  | by pwh's reading    |
      | a braced environment expansion            | by pwh's reading    |
      | a windows environment expansion           | by pwh's reading    |

  @M13
  Scenario Outline: an intent whose detail is a public text is recorded
    Given the post-writeback phase is enabled
    And hook "a.clean" is installed and proposes an intent whose detail is the clean sample "<sample>"
    When the orchestrator commits a todo_completed writeback
    Then the intent of hook "a.clean" is recorded as proposed, its clean sample kept

    Examples:
      | sample                                      |
      | a JSON Schema address                       |
      | a documentation domain                      |
      | a version number                            |
      | five dotted numbers                         |
      | a dotted code id                            |
      | a file name                                 |
      | a masked password                           |
      | a redacted token field                      |
      | a secret in prose                           |
      | a Python except clause                      |
      | a short code path                           |
      | a clock time                                |
      | a JSON path                                 |
      | and-or                                      |
      | a timestamp                                 |
      | a sentence naming a user                    |
      | a sentence naming a user, with a colon      |
      | a file name after a word ending in w        |
      | a call on a known domain beside a file name |
      | a file named in prose                       |
      | an exception class named in prose           |
      | a log level in prose                        |
      | a dollar amount                             |
      | a lowercase environment-like word           |

  @M13
  Scenario Outline: an input whose Todo identity is a private value is never handed to the hook
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose Todo identity is the private sample "<sample>" is dispatched
    Then <judged>, hook "a.reporter" ends with failure code "input_boundary_rejected"
    And <judged>, hook "a.reporter" was never called
    And the rejection of hook "a.reporter" names the kind of the private sample "<sample>"

    Examples:
      | sample                    | judged              |
      | a posix path              | as the RFC requires |
      | a home directory by tilde | as the RFC requires |
      | an AWS access key         | as the RFC requires |
      | a password assignment     | as the RFC requires |
      | an IPv4 address           | as the RFC requires |
      | a full IPv6 address       | as the RFC requires |
      | an internal host name     | as the RFC requires |
      | a user line               | as the RFC requires |
      | a timestamped log line    | as the RFC requires |
      | an environment expansion  | by pwh's reading    |
      | an ftp address            | as the RFC requires |
      | a www address             | as the RFC requires |

  @M13
  Scenario: the rejection of a leaking intent points at the field that carries the private value
    Given the post-writeback phase is enabled
    And hook "a.leaky" is installed and proposes an intent whose detail is the private sample "a posix path"
    When the orchestrator commits a todo_completed writeback
    Then hook "a.leaky" ends with failure code "result_contract_rejected"
    And the rejection of hook "a.leaky" points at "$.intents[0].payload.detail"

  @M13
  Scenario: a private key in an intent's payload is rejected and withheld from the rejection's path
    Given the post-writeback phase is enabled
    And hook "a.leaky" is installed and proposes an intent whose payload has the private sample "an e-mail address" as a key
    When the orchestrator commits a todo_completed writeback
    Then hook "a.leaky" ends with failure code "result_contract_rejected"
    And the rejection of hook "a.leaky" points at "$.intents[0].payload[?]"
    And nothing the dispatcher recorded, reported or handed a hook carries a private value

  @M13
  Scenario: the rejection of an unprovable input points at the field that would carry the private value
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose Todo identity is the private sample "a posix path" is dispatched
    Then hook "a.reporter" ends with failure code "input_boundary_rejected"
    And the rejection of hook "a.reporter" points at "$.source.todo_id"

  @M13
  Scenario Outline: a private value in any one of three intents fails the whole result
    Given the post-writeback phase is enabled
    And hook "a.leaky" is installed and proposes three intents, the <position> of which has the private sample "a GitHub token" as its detail
    When the orchestrator commits a todo_completed writeback
    Then as the RFC requires, hook "a.leaky" ends with failure code "result_contract_rejected"
    And nothing the dispatcher recorded, reported or handed a hook carries a private value

    Examples:
      | position |
      | first    |
      | middle   |
      | last     |
