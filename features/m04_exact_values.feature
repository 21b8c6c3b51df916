Feature: M04 limits — the journal keeps the validated intent exactly as proposed
  Core journals the intent it validated: the record's payload is the payload the hook proposed and
  whose digest is the intent's identity, byte for byte, whatever number it carries.

  @M04
  Scenario Outline: an integer a binary64 number cannot hold is recorded exactly as proposed
    Given the post-writeback phase is enabled
    And hook "a.counter" proposes an intent whose score is the integer <n>
    When the orchestrator commits a todo_completed writeback
    Then hook "a.counter" has exactly the intents it proposed on record

    Examples:
      | n                    |
      | 9007199254740993     |
      | -9007199254740993    |
      | 9223372036854775807  |
