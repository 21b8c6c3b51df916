Feature: M11 — a periodic-report replan transition gives one trigger-evaluation intent

  @M11
  Scenario: a committed replan yields one intent and the reducer finds a report due
    Given the post-writeback phase is enabled
    And the periodic-report capability is installed
    When the orchestrator commits a replan_recorded writeback
    And the fake scheduler consumes the intent receipts
    Then hook "periodic_report.runtime_trigger" has exactly one recorded intent
    And the fake scheduler received exactly one "periodic_report.trigger_evaluation" intent
    And the trigger decision says a report is due because "replan_transition"
    And the sink was never called

  @M11
  Scenario: a replayed replan still gives exactly one intent
    Given the post-writeback phase is enabled
    And the periodic-report capability is installed
    When the orchestrator commits a replan_recorded writeback
    And the orchestrator replays that writeback 3 times
    And the fake scheduler consumes the intent receipts twice
    Then hook "periodic_report.runtime_trigger" was called 1 time
    And the fake scheduler received exactly one "periodic_report.trigger_evaluation" intent

  @M11
  Scenario: a plain progress writeback is not a replan and yields nothing
    Given the post-writeback phase is enabled
    And the periodic-report capability is installed
    When the orchestrator commits a plain progress writeback
    And the fake scheduler consumes the intent receipts
    Then no provider was called
    And the fake scheduler received no intent

  @M11
  Scenario: a crash after the replan's writeback recovers to one intent
    Given the post-writeback phase is enabled
    And the periodic-report capability is installed
    When the process crashes at "primary.after_writeback" during a replan and restarts
    And the fake scheduler consumes the intent receipts
    Then hook "periodic_report.runtime_trigger" has exactly one recorded intent
    And the fake scheduler received exactly one "periodic_report.trigger_evaluation" intent
