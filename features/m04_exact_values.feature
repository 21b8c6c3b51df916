Feature: M04 limits — the journal keeps the validated intent exactly as proposed
  Core journals the intent it validated: the record's payload is the payload the hook proposed and
  whose digest is the intent's identity, byte for byte, whatever number it carries.

  @M04
  Scenario: an integer past what a binary64 number holds is recorded exactly as proposed
    Given the post-writeback phase is enabled
    And hook "a.counter" proposes an intent counting past the integers a binary64 number holds
    When the orchestrator commits a todo_completed writeback
    Then hook "a.counter" has exactly the intents it proposed on record
