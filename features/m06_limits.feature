Feature: M06 limits — "the same canonical result" is judged on canonical bytes
  A second delivery whose result differs only in the order of its keys is the same canonical
  result (RFC §9): a no-op returning the original receipt, never a conflict.

  @M06
  Scenario: a second delivery with the same result in another key order is a no-op, not a conflict
    Given the post-writeback phase is enabled
    And hook "a.reporter" proposes the same intent on every call, its keys in a different order each time
    When the orchestrator commits a todo_completed writeback
    And a second dispatcher delivers the same dispatch again
    Then hook "a.reporter" was called 2 times
    And hook "a.reporter" ends with status "proposed"
    And the journal still holds the original intent for hook "a.reporter"
