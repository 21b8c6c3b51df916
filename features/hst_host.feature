Feature: HST — the host executes, the core judges (seed 003)
  The host gets a bounded request and returns a candidate; only validation makes it a result.

  @HST-1 @smoke
  Scenario: the host request allows only the first two phases and carries the Turn's bounds
    When the orchestrator builds the host request for a Turn
    Then the request allows only the phases "host_execute, typed_result"
    And the request carries route, Todo, gate, scope, output schema, evidence requirements and stop and resume conditions
    And the request has no state-write entry anywhere

  @HST-1
  Scenario: a request carrying a state-write entry is refused by the host
    When the fake host is handed a request that carries a journal write entry
    Then the host refuses the request with code "host_request_forbidden_key"

  @HST-2
  Scenario Outline: a host that claims a later phase is rejected by validation
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the host <claims>
    Then the Turn stops at validation with code "host_phase_overclaim"
    And the rejection names "<path>"
    And no primary writeback was made
    And no provider was called

    Examples:
      | claims                                                 | path                  |
      | claims phases host_execute, typed_result and writeback | $.completed_phases[2] |
      | claims phases host_execute, typed_result and spend     | $.completed_phases[2] |

  @HST-2 @smoke
  Scenario: a host that claims only its own two phases is accepted
    When the host claims only phases host_execute and typed_result
    Then the Turn commits a todo_completed writeback

  @HST-3
  Scenario Outline: a completion without its lifecycle contract fails validation, never downgraded
    When the host <returns>
    Then the Turn stops at validation with code "completion_lifecycle_missing"
    And the rejection names "<path>"
    And no primary writeback was made

    Examples:
      | returns                                                    | path                 |
      | returns a completion with a lifecycle adapter but no follow-up | $.lifecycle.followup |

  @HST-3
  Scenario: a completion with no lifecycle at all fails validation
    When the host returns a completion without a lifecycle adapter
    Then the Turn stops at validation with code "completion_lifecycle_missing"
    And no primary writeback was made

  @HST-3
  Scenario: a completion with its adapter and a successor is accepted
    When the host returns a completion with a successor follow-up
    Then the Turn commits a todo_completed writeback

  @HST-4
  Scenario Outline: a non-material result may not smuggle material fields
    When the host <returns>
    Then the Turn stops at validation with code "non_material_with_evidence"
    And the rejection names "<path>"

    Examples:
      | returns                                                   | path                   |
      | returns a waiting result that carries evidence            | $.evidence             |
      | returns a waiting result that carries a path delta        | $.path_delta           |
      | returns a failed result that carries a progress observation | $.progress_observation |

  @HST-4
  Scenario: a clean non-material result writes nothing back and dispatches nothing
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the host returns a clean waiting result
    Then the Turn writes nothing back
    And no provider was called

  @HST-5
  Scenario: output over 12,000 bytes is a diagnosable failure, never half-parsed
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the host returns 12,001 bytes of output
    Then the Turn stops at validation with code "host_output_oversize"
    And no primary writeback was made
    And no provider was called

  @HST-5
  Scenario: output of exactly 12,000 bytes is read whole
    When the host returns exactly 12,000 bytes of output
    Then the Turn commits a todo_completed writeback

  @HST-5
  Scenario: truncated output is rejected as not JSON
    When the host returns output that is not JSON
    Then the Turn stops at validation with code "host_output_not_json"

  @HST-6
  Scenario Outline: a result bound to another Turn is rejected
    When the host <returns>
    Then the Turn stops at validation with code "host_result_binding_mismatch"
    And the rejection names "<path>"
    And no primary writeback was made

    Examples:
      | returns                                  | path         |
      | returns a result bound to another Turn   | $.turn_key   |
      | returns a result bound to another effect | $.effect_ref |

  @HST-6
  Scenario: a result bound to this Turn is accepted
    When the host claims only phases host_execute and typed_result
    Then the Turn commits a todo_completed writeback
