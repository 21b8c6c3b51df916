Feature: M04 — mutants of the identities: the reference profile's digest recipe, byte for byte
  Written for the mutants that survived the matrix (tests/mutation/survivors.md): the matrix held
  identities stable and distinct, never to the published recipe, so a changed field name inside the
  digest went unseen. These scenarios recompute both digests on their own from what was recorded.

  @M04
  Scenario Outline: a committed writeback's identities follow the reference profile's recipe
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When the orchestrator commits a <kind> writeback
    Then the dispatch identity of hook "a.reporter" follows the reference profile's recipe
    And the intent identity recorded for hook "a.reporter" follows the reference profile's recipe

    Examples:
      | kind            |
      | todo_completed  |
      | replan_recorded |

  @M04
  Scenario: an intent with a non-ASCII payload has the recipe's identity
    Given the post-writeback phase is enabled
    And hook "a.clean" is installed and proposes an intent whose detail is the clean sample "a sentence in French"
    When the orchestrator commits a todo_completed writeback
    Then the intent of hook "a.clean" is recorded as proposed, its clean sample kept
    And the intent identity recorded for hook "a.clean" follows the reference profile's recipe
