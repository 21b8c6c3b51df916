Feature: M13 limits — a failure leaves a compact code, nothing of the provider's error
  The journal keeps bounded typed packets and compact failure codes only (RFC §9): no exception
  class, message, traceback or credential from what a provider raised.

  @M13
  Scenario: an error of the provider's own kind leaves nothing of itself in the journal or the outcome
    Given the post-writeback phase is enabled
    And hook "a.vault" raises an error of its own kind whose message carries a credential
    And hook "b.reporter" proposes one intent and keeps its answer
    When the orchestrator commits a todo_completed writeback
    Then hook "a.vault" ends with failure code "producer_failed"
    And the sidecar record of hook "a.vault" is a failure with code "producer_failed" and nothing else
    And the journal and the dispatch outcomes carry nothing of the error hook "a.vault" raised
    And hook "b.reporter" has exactly the intents it proposed on record
