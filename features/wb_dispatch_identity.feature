Feature: The writeback seam — one dispatch identity per admitted hook, from the committed receipt (M04, M05)

  @M04
  Scenario: two admitted hooks each get one identity from the committed receipt
    Given a Goal with 1 open Todo at the writeback seam, the post-writeback phase enabled
    And hook "a.reporter" is installed at the writeback seam and proposes one intent
    And hook "b.reporter" is installed at the writeback seam and answers not applicable
    When Todo 1 is completed through the primary path
    Then the primary path committed 1 writeback
    And every hook at the writeback seam was handed only committed receipts, each once
    And hook "a.reporter" at the writeback seam ends with status "proposed"
    And hook "b.reporter" at the writeback seam ends with status "not_applicable"

  @M04
  Scenario: after a failed writeback only the receipt that committed is dispatched
    Given a Goal with 2 open Todos at the writeback seam, the post-writeback phase enabled
    And hook "a.reporter" is installed at the writeback seam and proposes one intent
    When Todo 1 is completed through the primary path, its writeback failing
    And Todo 2 is completed through the primary path
    Then the primary path committed 1 writeback
    And every hook at the writeback seam was handed only committed receipts, each once

  @M05
  Scenario: replaying a committed completion returns the same dispatch receipt and no duplicate intent
    Given a Goal with 1 open Todo at the writeback seam, the post-writeback phase enabled
    And hook "a.reporter" is installed at the writeback seam and proposes one intent
    When Todo 1 is completed through the primary path
    And committed writeback 1 is replayed through the primary path
    Then the replay returned the same dispatch receipt and recorded nothing new
    And hook "a.reporter" at the writeback seam has exactly one recorded intent
    And every hook at the writeback seam was handed only committed receipts, each once

  @M05
  Scenario Outline: a process killed <moment> recovers to one identity and one intent per hook
    Given a Goal with 1 open Todo at the writeback seam, the post-writeback phase enabled
    And hook "a.reporter" is installed at the writeback seam and proposes one intent
    And hook "b.reporter" is installed at the writeback seam and proposes one intent
    When Todo 1 is completed through the primary path and the process is killed <moment>
    Then nothing of the crashed commit's dispatch was recorded twice or half before recovery
    And the primary path committed 1 writeback
    And hook "a.reporter" at the writeback seam has exactly one recorded intent
    And hook "b.reporter" at the writeback seam has exactly one recorded intent
    And commit 1's quota-spend eligibility equals a run with no hooks and no crash

    Examples:
      | moment                    |
      | after_primary_commit      |
      | inside_provider           |
      | before_sidecar_checkpoint |
