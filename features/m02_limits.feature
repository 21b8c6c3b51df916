Feature: M02 limits — every registration bound holds on both sides
  At a bound the registration is accepted and used; one past it, it is rejected at installation,
  before any provider call. A bound the profile sets is the RFC's limit (§6, §10: at it accepted,
  past it rejected); the core's own numbers are pwh's profile (8 invocations, 16 intents, 65,536
  result bytes, 30,000 ms, 8 intent kinds, 64-character hook id segments), judged as profile checks.

  @M02
  Scenario Outline: a budget exactly at its core ceiling is accepted and the hook is used
    Given the post-writeback phase is enabled
    And hook "a.reporter" is registered with its <field> budget at <ceiling>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" is installed at that bound and its intents are on record as proposed

    Examples:
      | field                        | ceiling |
      | max_invocations_per_dispatch | 8       |
      | max_intents_per_dispatch     | 16      |
      | max_result_bytes             | 65536   |
      | timeout_ms                   | 30000   |

  @M02
  Scenario Outline: a budget one past its core ceiling, or zero, is rejected before any call
    Given the post-writeback phase is enabled
    And hook "a.reporter" is registered with its <field> budget at <value>
    When the orchestrator commits a todo_completed writeback
    Then the registration of hook "a.reporter" is rejected at the field it breaks
    And if the registration of hook "a.reporter" was rejected, it was never called

    Examples:
      | field                        | value |
      | max_invocations_per_dispatch | 9     |
      | max_intents_per_dispatch     | 17    |
      | max_result_bytes             | 65537 |
      | timeout_ms                   | 30001 |
      | max_intents_per_dispatch     | 0     |
      | max_result_bytes             | 0     |
      | timeout_ms                   | 0     |

  @M02
  Scenario: a timeout exactly at the profile's own ceiling is accepted and the hook is used
    Given the post-writeback phase is enabled
    And the profile caps hook timeouts at 100 ms
    And hook "a.reporter" is registered with its timeout_ms budget at 100
    When the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" is installed
    And hook "a.reporter" has exactly the intents it proposed on record

  @M02
  Scenario: a timeout one past the profile's ceiling is rejected at installation, never called
    Given the post-writeback phase is enabled
    And the profile caps hook timeouts at 100 ms
    And hook "a.reporter" is registered with its timeout_ms budget at 101
    When the orchestrator commits a todo_completed writeback
    Then the registration of hook "a.reporter" is rejected at the field it breaks
    And no provider was called

  @M02
  Scenario Outline: the intent-kind array is bounded on both sides
    Given the post-writeback phase is enabled
    And hook "a.reporter" is registered with <n> intent kinds
    When the orchestrator commits a todo_completed writeback
    Then <verdict>

    Examples:
      | n | verdict                                                                   |
      | 8 | hook "a.reporter" is installed at that bound and its intents are on record as proposed |
      | 9 | the registration of hook "a.reporter" is rejected at the field it breaks |

  @M02
  Scenario Outline: a hook id segment is bounded on both sides
    Given the post-writeback phase is enabled
    And a hook is registered whose hook id has a segment of <n> characters
    Then the hook whose id has a <n>-character segment <verdict>

    Examples:
      | n  | verdict                            |
      | 64 | is installed                       |
      | 65 | is rejected at the field it breaks |

  @M02
  Scenario: a profile ceiling lowered to exactly an installed hook's timeout still admits the hook
    Given the post-writeback phase is enabled
    And hook "a.reporter" is registered with its timeout_ms budget at 500
    When the profile's timeout ceiling is then lowered to 500 ms
    And the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" has exactly the intents it proposed on record

  @M02
  Scenario: a profile ceiling lowered to one below an installed hook's timeout rejects it before any call
    Given the post-writeback phase is enabled
    And hook "a.reporter" is registered with its timeout_ms budget at 500
    When the profile's timeout ceiling is then lowered to 499 ms
    And the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" ends with failure code "registration_rejected"
    And hook "a.reporter" was never called
