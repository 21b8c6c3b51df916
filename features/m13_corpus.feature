Feature: M13 — pwh's labelled boundary corpus through real dispatches
  pwh/corpus/boundary.jsonl labels private values (credential shapes, paths, host names, e-mail,
  transcripts, logs, secrets under secret keys in any spelling, look-alike and invisible
  characters) and legitimate ones (opaque ids of the contract's grammar, versions, prose). One
  hook proposes the first four values of each kind in turn, one receipt a value, inside an
  intent's payload where the corpus places it (the whole corpus, value by value, is the
  reliability campaign's). Refusing what is private is §7's; which values are private, kind by kind, is
  pwh's reading (profile), but for one family: a credential of a certain format (an Azure connection
  string, an age secret key, an Atlassian, Databricks or Discord token, a GitHub or AWS key...) is never
  handed to a hook nor journaled (§7 "Input 必须排除…credential", §9 "Journal…不保存…credential",
  §12 M13), whatever the payload schema takes: that check is RFC.

  @M13
  Scenario: each private value of the corpus fails the hook that proposed it and none is recorded
    Given the post-writeback phase is enabled
    And hook "c.corpus" proposes, for the n-th receipt, an intent carrying the n-th private value of pwh's boundary corpus
    When a committed receipt is dispatched for each of those values
    Then each of those dispatches ends hook "c.corpus" with failure code "result_contract_rejected"
    And no intent of hook "c.corpus" is recorded
    And nothing the dispatcher recorded, reported or handed a hook carries a private value

  @M13
  Scenario: each legitimate value of the corpus is recorded
    Given the post-writeback phase is enabled
    And hook "c.corpus" proposes, for the n-th receipt, an intent carrying the n-th legitimate value of pwh's boundary corpus
    When a committed receipt is dispatched for each of those values
    Then each of those dispatches records the intent hook "c.corpus" proposed
