Feature: The writeback seam — no committed receipt, no post-writeback call (M01, M03)
  The implementation commits through its own primary path; pwh's producers count every provider
  call wherever they run, and the boundary's own account is read as well.

  @M01
  Scenario: with the phase off a committed completion calls no provider and leaves no intent
    Given a Goal with 1 open Todo at the writeback seam, the post-writeback phase disabled
    And hook "a.reporter" is installed at the writeback seam and proposes one intent
    When Todo 1 is completed through the primary path
    Then the primary path committed 1 writeback
    And no provider was called at the writeback seam
    And the writeback seam holds no sidecar record and no intent

  @M01
  Scenario: with no capability installed a committed completion and a replan leave no intent
    Given a Goal with 2 open Todos at the writeback seam, the post-writeback phase enabled
    When Todo 1 is completed through the primary path
    And a replan is recorded through the primary path
    Then the primary path committed 2 writebacks
    And the writeback seam holds no sidecar record and no intent

  @M03
  Scenario Outline: a completion whose primary <failure> fails calls no provider
    Given a Goal with 1 open Todo at the writeback seam, the post-writeback phase enabled
    And hook "a.reporter" is installed at the writeback seam and proposes one intent
    When Todo 1 is completed through the primary path, its <failure> failing
    Then the primary path committed 0 writebacks
    And no provider was called at the writeback seam
    And the writeback seam holds no sidecar record and no intent

    Examples:
      | failure    |
      | validation |
      | writeback  |

  @M03
  Scenario: a replan whose writeback fails calls no provider
    Given a Goal with 1 open Todo at the writeback seam, the post-writeback phase enabled
    And hook "a.reporter" is installed at the writeback seam and proposes one intent
    When a replan is recorded through the primary path, its writeback failing
    Then the primary path committed 0 writebacks
    And no provider was called at the writeback seam
    And the writeback seam holds no sidecar record and no intent
