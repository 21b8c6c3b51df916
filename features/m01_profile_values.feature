Feature: M01 profile values — a profile that does not say "on" in so many words does not enable the phase
  A profile is read from configuration, where "false" is a string and a list can be one word. The
  phase runs only under a profile whose switch is the boolean true and whose every value has its
  type: anything else calls no provider and records nothing.

  @M01
  Scenario Outline: a profile with <flaw> calls no provider and records nothing
    Given hook "a.reporter" is installed and proposes one intent
    And the execution profile has <flaw>
    When the orchestrator commits a todo_completed writeback
    Then no provider was called
    And the sidecar journal holds no intent
    And the dispatch is not admitted, with code "profile_rejected"
    And the dispatch is not admitted, at "<field>"
    And the primary receipt and the quota-spend eligibility are unchanged

    Examples:
      | flaw                                       | field                                 |
      | a phase switch that is the string "false"  | $.profile.phase_enabled               |
      | a phase switch that is the string "true"   | $.profile.phase_enabled               |
      | a phase switch that is the number 1        | $.profile.phase_enabled               |
      | an allowlist that is one string            | $.profile.allowlist                   |
      | a hook ceiling that is a string            | $.profile.max_hooks_per_dispatch      |
      | a retry cap of zero                        | $.profile.max_attempts                |
      | a timeout ceiling that is a string         | $.profile.budget_ceilings.timeout_ms  |
