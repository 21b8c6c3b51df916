Feature: M05 limits — what the journal holds between a crash and its recovery
  A dispatch's sidecar records land in one atomic commit: a crash before it leaves nothing
  half-written for recovery to trust, and recovery then yields one record per admitted hook.

  @M05
  Scenario Outline: a crash before the sidecar commit leaves no record until recovery runs
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent
    When the process crashes at "<point>" during a completion, before any recovery
    Then before any recovery, the sidecar journal holds 0 records
    When the process restarts
    Then each admitted hook has exactly one dispatch identity and one sidecar record
    And the quota was spent exactly once for each committed receipt

    Examples:
      | point                             |
      | primary.after_writeback           |
      | sidecar.before_checkpoint         |
      | sidecar.after_provider_returned   |
      | sidecar.inside_record_transaction |

  @M05
  Scenario: a crash just after the sidecar commit leaves every record whole, and recovery keeps them
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent
    When the process crashes at "sidecar.after_record" during a completion, before any recovery
    Then before any recovery, the sidecar journal holds 2 records
    When the sidecar journal is noted
    And the process restarts
    Then every sidecar record noted earlier is still there, unchanged
    And the sidecar journal holds 2 records

  # After a crash, the same dispatch may reach the journal through another dispatcher rather
  # than the crashed process's own recovery (RFC §9, §14): it is the same dispatch either way.
  @M05
  Scenario Outline: a second dispatcher handed the receipt a crash left retries the same dispatch
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent
    When the process crashes at "<point>" during a completion, before any recovery
    And a second dispatcher delivers every committed receipt again, with no recovery run
    Then each admitted hook has exactly one dispatch identity and one sidecar record

    Examples:
      | point                     |
      | sidecar.before_checkpoint |
      | sidecar.after_record      |

  # Which profile governs a dispatch retried after a crash is left open by the RFC; under either
  # reading the retry is the same dispatch, and what was recorded stays.
  @M05
  Scenario: a profile changed between a crash and its recovery keeps the records made and one identity per hook
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent
    When the process crashes at "sidecar.after_record" during a completion, before any recovery
    And the sidecar journal is noted
    And the profile then caps hook timeouts at 400 ms
    And the process restarts
    Then every sidecar record noted earlier is still there, unchanged
    And each admitted hook has exactly one dispatch identity and one sidecar record

  @M05
  Scenario: a profile changed before a crashed dispatch is recovered leaves one identity per hook
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    And hook "b.reporter" is installed and proposes one intent
    When the process crashes at "sidecar.before_checkpoint" during a completion, before any recovery
    And the profile then caps hook timeouts at 400 ms
    And the process restarts
    Then each admitted hook has exactly one dispatch identity and one sidecar record
