Feature: M04 — survivors of the mutation campaign: a writeback that is not a post-writeback event says why
  Written for the open survivors of tests/mutation/survivors.md: the refusal of a plain progress
  writeback gives a stable code and a non-empty, public-safe reason.

  @M04
  Scenario: a plain progress writeback is refused with a code and a reason
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a plain progress writeback
    Then the dispatch is not admitted, with code "not_a_post_writeback_event"
    And no provider was called
    And every rejection reported so far has a stable code and a non-empty, public-safe reason
