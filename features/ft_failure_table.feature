Feature: FT — seed 003's failure-and-recovery table, row by row

  @FT-1
  Scenario: a provider that is not installed stops the Turn before the host runs
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And the Turn's provider is declared but not installed
    When the orchestrator commits a todo_completed writeback
    Then the Turn stops at provider resolution with code "provider_not_installed"
    And the recovery hint is "install_and_reprobe"
    And no primary writeback was made
    And no provider was called

  @FT-1
  Scenario: once installed and re-probed, the Turn runs
    Given the Turn's provider is declared but not installed
    When the provider is installed, enabled and made ready, and re-probed
    Then the Turn commits a todo_completed writeback

  @FT-2
  Scenario: a provider that is not ready stops the Turn before the host runs
    Given the Turn's provider is installed and enabled but not ready
    When the orchestrator commits a todo_completed writeback
    Then the Turn stops at provider resolution with code "provider_not_ready"
    And the recovery hint is "repair_dependencies_via_capability_gate"
    And no primary writeback was made

  @FT-2
  Scenario: once its dependencies are repaired, the Turn runs
    Given the Turn's provider is installed and enabled but not ready
    When the provider is installed, enabled and made ready, and re-probed
    Then the Turn commits a todo_completed writeback

  @FT-3
  Scenario: a host that overclaims its phases is rejected and the primary journal kept
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a todo_completed writeback
    And the host claims phases host_execute, typed_result and writeback
    Then the Turn stops at validation with code "host_phase_overclaim"
    And 1 primary writebacks are committed
    And hook "a.reporter" was called 1 time

  @FT-3
  Scenario: a host that claims only its phases is accepted
    When the host claims only phases host_execute and typed_result
    Then the Turn commits a todo_completed writeback

  @FT-4
  Scenario: a completion without a lifecycle is rejected, not written back
    When the host returns a completion without a lifecycle adapter
    Then the Turn stops at validation with code "completion_lifecycle_missing"
    And no primary writeback was made

  @FT-4
  Scenario: completing the follow-up contract makes the completion legal
    When the host returns a completion with a successor follow-up
    Then the Turn commits a todo_completed writeback

  @FT-5
  Scenario: a non-material result with evidence is rejected
    When the host returns a waiting result that carries evidence
    Then the Turn stops at validation with code "non_material_with_evidence"

  @FT-5
  Scenario: re-issued without the evidence, the non-material result is accepted
    When the host returns a clean waiting result
    Then the Turn writes nothing back

  @FT-6
  Scenario: oversize host output is a diagnosable failure
    When the host returns 12,001 bytes of output
    Then the Turn stops at validation with code "host_output_oversize"
    And no primary writeback was made

  @FT-6
  Scenario: output shrunk to the cap is accepted
    When the host returns exactly 12,000 bytes of output
    Then the Turn commits a todo_completed writeback

  @FT-7
  Scenario: a crash after the provider call is recovered by readback first
    Given an effect provider wrote to the sink under a governed ticket and crashed before returning its receipt
    When the effect is recovered by readback first
    Then the sink holds the effect exactly once
    And the effect was not retried

  @FT-7
  Scenario: repeating the call blindly duplicates the effect
    Given an effect provider wrote to the sink under a governed ticket and crashed before returning its receipt
    When the effect is recovered by retrying blindly
    Then the sink holds the effect exactly twice
