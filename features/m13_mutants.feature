Feature: M13 — mutants of the boundary scanner: each kind of private value, and texts that are public
  Written for the mutants that survived the matrix (tests/mutation/survivors.md): every rule of the
  public-boundary scan is met by a text it alone catches, on each of the scanner's lanes (bare ids,
  dotted ids, prose), and texts the reference reads as public are recorded, so a scanner that misses a
  kind, or flags too much, fails a scenario.

  @M13
  Scenario Outline: an intent whose detail carries a private value is rejected, naming what it found
    Given the post-writeback phase is enabled
    And hook "a.leaky" is installed and proposes an intent whose detail is the private sample "<sample>"
    When the orchestrator commits a todo_completed writeback
    Then hook "a.leaky" ends with failure code "result_contract_rejected"
    And the rejection of hook "a.leaky" names the kind of the private sample "<sample>"
    And nothing the dispatcher recorded or reported carries a private value

    Examples:
      | sample |
      | an ftp address |
      | a schema address beside a private address |
      | a www address |
      | an upper-case www address |
      | an e-mail address |
      | a posix path |
      | a windows path |
      | a windows share |
      | a home directory by tilde |
      | a home directory after a semicolon |
      | a mac home directory after a semicolon |
      | the root home after a semicolon |
      | an AWS access key |
      | an AWS session key |
      | a GitHub token |
      | a Slack token |
      | an API secret key |
      | a Google API key |
      | a JSON web token |
      | a private key block |
      | a bearer token |
      | an upper-case bearer token |
      | an authorization header |
      | an upper-case authorization header |
      | a password assignment |
      | an api key field with a symbol |
      | a quoted token field |
      | an IPv4 address |
      | a link-local IPv6 address |
      | a full IPv6 address |
      | an internal host name |
      | an internal host name in a sentence |
      | a bare IPv4 address |
      | a bare www address |
      | a mixed-case www address |
      | a bare loopback host name |
      | a bare GitHub token in a dotted id |
      | a bare AWS access key |
      | a bare Google API key |
      | a Slack token in a sentence |
      | an API secret key in a sentence |
      | a GitHub token in a sentence |
      | a JSON web token in a sentence |
      | a client secret assignment |
      | a passphrase field with a symbol |
      | a human line |
      | an AI line |
      | a system line |
      | a tool role field |
      | an end-of-turn marker |
      | a user line |
      | an assistant line |
      | a role field |
      | chat markup |
      | an instruction marker |
      | a system prompt marker |
      | a traceback header |
      | a traceback frame |
      | an exception message |
      | a Java exception message |
      | a timestamped log line |
      | a bracketed log level |
      | a shell prompt |
      | a root shell prompt |
      | a python prompt |
      | an environment assignment |
      | an environment expansion |
      | a braced environment expansion |
      | a windows environment expansion |

  @M13
  Scenario Outline: an intent whose detail is a public text is recorded
    Given the post-writeback phase is enabled
    And hook "a.clean" is installed and proposes an intent whose detail is the clean sample "<sample>"
    When the orchestrator commits a todo_completed writeback
    Then the intent of hook "a.clean" is recorded as proposed, its clean sample kept

    Examples:
      | sample |
      | a JSON Schema address |
      | a documentation domain |
      | a version number |
      | five dotted numbers |
      | a dotted code id |
      | a file name |
      | a masked password |
      | a redacted token field |
      | a secret in prose |
      | a Python except clause |
      | a short code path |
      | a clock time |
      | a JSON path |
      | and-or |
      | a timestamp |
      | a sentence naming a user |
      | a sentence naming a user, with a colon |
      | a file name after a word ending in w |
      | a call on a known domain beside a file name |
      | a file named in prose |
      | an exception class named in prose |
      | a log level in prose |
      | a dollar amount |
      | a lowercase environment-like word |

  @M13
  Scenario Outline: an input whose Todo identity is a private value is never handed to the hook
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose Todo identity is the private sample "<sample>" is dispatched
    Then hook "a.reporter" ends with failure code "input_boundary_rejected"
    And hook "a.reporter" was never called
    And the rejection of hook "a.reporter" names the kind of the private sample "<sample>"

    Examples:
      | sample |
      | a posix path |
      | a home directory by tilde |
      | an AWS access key |
      | a password assignment |
      | an IPv4 address |
      | a full IPv6 address |
      | an internal host name |
      | a user line |
      | a timestamped log line |
      | an environment expansion |
      | an ftp address |
      | a www address |

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
    And nothing the dispatcher recorded or reported carries a private value

  @M13
  Scenario: the rejection of an unprovable input points at the field that would carry the private value
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose Todo identity is the private sample "a posix path" is dispatched
    Then hook "a.reporter" ends with failure code "input_boundary_rejected"
    And the rejection of hook "a.reporter" points at "$.source.todo_id"
