Feature: The writeback seam — a failing hook changes nothing of the primary Turn (M07, M08)

  @M07
  Scenario Outline: a hook that <behaviour> leaves the primary receipt and the spend as with no hooks
    Given a Goal with 2 open Todos at the writeback seam, the post-writeback phase enabled
    And hook "a.broken" is installed at the writeback seam and <behaviour>
    When Todo 1 is completed through the primary path
    And a replan is recorded through the primary path
    Then the primary path committed 2 writebacks
    And hook "a.broken" at the writeback seam ends with status "failed"
    And the primary receipts and the spend eligibility equal a run with no hooks

    Examples:
      | behaviour                         |
      | raises an error                   |
      | raises a BaseException            |
      | does not return within its timeout |
      | returns garbage                   |
      | returns a value that is not JSON  |

  @M08
  Scenario: several hooks run in hook_id order and one failing hook does not touch the others
    Given a Goal with 1 open Todo at the writeback seam, the post-writeback phase enabled
    And hook "c.third" is installed at the writeback seam and proposes one intent
    And hook "a.first" is installed at the writeback seam and raises an error
    And hook "b.second" is installed at the writeback seam and proposes one intent
    When Todo 1 is completed through the primary path
    Then the hooks at the writeback seam ran in stable hook_id order
    And hook "a.first" at the writeback seam ends with status "failed"
    And hook "b.second" at the writeback seam ends with status "proposed"
    And hook "c.third" at the writeback seam ends with status "proposed"
    And hook "b.second" at the writeback seam has exactly one recorded intent
    And hook "c.third" at the writeback seam has exactly one recorded intent
    And every hook at the writeback seam was handed only committed receipts, each once
    And the primary receipts and the spend eligibility equal a run with no hooks
