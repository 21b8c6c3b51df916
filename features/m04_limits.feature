Feature: M04 limits — identities that move with their inputs, and the whole input a hook is given
  A changed policy version gives a new intent identity and never overwrites history (RFC §9);
  each hook is given exactly the RFC §7 input: opaque source identities as committed, the
  bounded projection and all six boundary flags false.

  @M04
  Scenario: a changed policy version gives new identities and keeps the earlier record as it was
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent under policy version "v1"
    When the orchestrator commits a todo_completed writeback
    And the sidecar journal is noted
    And hook "a.reporter" moves to policy version "v2"
    And the orchestrator commits a todo_completed writeback
    Then hook "a.reporter" has one sidecar record per committed writeback, each under its own dispatch identity
    And the intent on record for writeback number 1 of hook "a.reporter" is under policy version "v1"
    And the intent on record for writeback number 2 of hook "a.reporter" is under policy version "v2"
    And the intents on record for hook "a.reporter" have distinct identities
    And every sidecar record noted earlier is still there, unchanged

  @M04
  Scenario: a hook is given exactly the RFC input, all six boundary flags false
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a replan_recorded writeback
    Then hook "a.reporter" was given exactly the RFC input for that writeback

  # A dispatch identity digests the whole receipt identity (RFC §9): receipts whose ids share a
  # long prefix are two receipts.
  @M04
  Scenario: two receipts whose ids differ only in their last character get one identity each
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When two committed receipts whose ids differ only in their last character are dispatched
    Then the sidecar journal holds 2 records
    And hook "a.reporter" ends with status "proposed"
