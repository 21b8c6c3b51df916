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
