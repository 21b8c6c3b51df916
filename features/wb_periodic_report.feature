Feature: The writeback seam — proposals only, end to end through the fake scheduler (M09..M13)
  From the implementation's own committed completion or replan to the validated intent receipt and
  pwh's fake scheduler; never to a sink.

  @M09
  Scenario: a requested write scope is recorded as a proposal and the admission denies it
    Given a Goal with 1 open Todo at the writeback seam, the post-writeback phase enabled
    And hook "a.publisher" is installed at the writeback seam and proposes an intent requesting write scope report.publish
    When Todo 1 is completed through the primary path
    And the fake scheduler consumes the writeback seam's intent receipts
    Then the intent recorded at the writeback seam for hook "a.publisher" requests write scope "report.publish" and claims nothing
    And the governed admission denied the intent with code "write_scope_not_admitted"
    And the sink was never called

  @M10
  Scenario: the completion that closes the segment yields one typed trigger-evaluation intent
    Given a Goal with 3 open Todos at the writeback seam, with the periodic-report capability installed
    When Todos 1 to 3 are completed through the primary path
    And the fake scheduler consumes the writeback seam's intent receipts
    Then the writeback seam recorded exactly one "periodic_report.trigger_evaluation" intent, for the receipt that closed the segment
    And the fake scheduler received exactly one "periodic_report.trigger_evaluation" intent
    And the sink was never called

  @M10
  Scenario: completions that do not close the segment yield no intent
    Given a Goal with 3 open Todos at the writeback seam, with the periodic-report capability installed
    When Todos 1 to 2 are completed through the primary path
    Then the primary path committed 2 writebacks
    And the writeback seam recorded no intent

  @M11
  Scenario: a recorded replan yields one typed trigger-evaluation intent
    Given a Goal with 3 open Todos at the writeback seam, with the periodic-report capability installed
    When a replan is recorded through the primary path
    And the fake scheduler consumes the writeback seam's intent receipts
    Then the writeback seam recorded exactly one "periodic_report.trigger_evaluation" intent, for the receipt that closed the segment
    And the fake scheduler received exactly one "periodic_report.trigger_evaluation" intent
    And the trigger decision says a report is due because "replan_transition"

  @M12
  Scenario: a proposed report reaches no sink and no network before a separate admission
    Given a Goal with 2 open Todos at the writeback seam, with the periodic-report capability installed
    And hook "a.reporter" is installed at the writeback seam and proposes one intent
    When Todo 1 is completed through the primary path
    And a replan is recorded through the primary path
    And the fake scheduler consumes the writeback seam's intent receipts
    Then the sink was never called
    And no outbound network connection was attempted

  @M13
  Scenario: private values a user planted reach no hook input and no journaled record
    Given private values made by Faker are planted in the run
    And a Goal with 3 open Todos at the writeback seam, with the periodic-report capability installed
    And the planted private values are put where a user puts them at the writeback seam
    And hook "a.reporter" is installed at the writeback seam and proposes one intent
    And hook "b.failing" is installed at the writeback seam and raises an error
    When Todos 1 to 2 are completed through the primary path
    And a replan is recorded through the primary path
    Then no hook input and no journaled record at the writeback seam carries a planted private value
