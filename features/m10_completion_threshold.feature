Feature: M10 — the periodic-report completion threshold gives one trigger-evaluation intent
  End to end: from a committed completion that closes a segment, through the dispatcher and the
  fake scheduler, to the capability's own trigger reducer. It stops before any renderer or sink.

  @M10
  Scenario: the completion that closes a segment yields one typed trigger-evaluation intent
    Given the post-writeback phase is enabled
    And a segment closes after 3 completed Todos
    And the periodic-report capability is installed
    When the orchestrator commits todo_completed writebacks until the segment closes
    And the fake scheduler consumes the intent receipts
    Then hook "periodic_report.runtime_trigger" has exactly one recorded intent
    And the fake scheduler received exactly one "periodic_report.trigger_evaluation" intent
    And the trigger decision says a report is not due because "below_threshold"
    And the sink was never called

  @M10
  Scenario: completions that do not close a segment yield no intent
    Given the post-writeback phase is enabled
    And a segment closes after 3 completed Todos
    And the periodic-report capability is installed
    When the orchestrator commits 2 todo_completed writebacks
    And the fake scheduler consumes the intent receipts
    Then hook "periodic_report.runtime_trigger" ends with status "not_applicable"
    And the fake scheduler received no intent

  @M10
  Scenario: replaying the closing completion and consuming twice still executes one intent
    Given the post-writeback phase is enabled
    And a segment closes after 1 completed Todos
    And the periodic-report capability is installed
    When the orchestrator commits a todo_completed writeback
    And the orchestrator replays that writeback 2 times
    And the fake scheduler consumes the intent receipts twice
    Then hook "periodic_report.runtime_trigger" has exactly one recorded intent
    And the fake scheduler received exactly one "periodic_report.trigger_evaluation" intent

  @M10
  Scenario: with the phase disabled the closing completion yields nothing
    Given the post-writeback phase is disabled
    And a segment closes after 1 completed Todos
    And the periodic-report capability is installed
    When the orchestrator commits a todo_completed writeback
    And the fake scheduler consumes the intent receipts
    Then no provider was called
    And the fake scheduler received no intent
