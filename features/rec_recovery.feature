Feature: REC-1 — a provider that crashed after its effect is recovered by readback, not blind retry

  @REC-1
  Scenario: recovery reads the effect back and does not repeat it
    Given an effect provider wrote to the sink under a governed ticket and crashed before returning its receipt
    When the effect is recovered by readback first
    Then the sink holds the effect exactly once
    And the effect was not retried

  @REC-1
  Scenario: a blind retry would repeat the side effect (the failure REC-1 forbids)
    Given an effect provider wrote to the sink under a governed ticket and crashed before returning its receipt
    When the effect is recovered by retrying blindly
    Then the sink holds the effect exactly twice
    And the effect was retried
