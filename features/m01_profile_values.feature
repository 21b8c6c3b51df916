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
    And the primary receipt and the quota-spend eligibility are unchanged

    Examples:
      | flaw                                       |
      | a phase switch that is the string "false"  |
      | a phase switch that is the string "true"   |
      | a phase switch that is the number 1        |
      | an allowlist that is one string            |
      | a hook ceiling that is a string            |
      | a retry cap of zero                        |
      | a timeout ceiling that is a string         |
