Feature: M13 — a credential is never handed to a hook nor journaled
  The RFC excludes credentials from every hook input (§7: "Input 必须排除 … credential …") and from the
  journal (§9: "Journal 只保存有界 typed packet 与精简 failure code，不保存 … credential"), and its M13
  row asks the public-boundary scan to find none ("无私有名称、URL、路径、credential…"). A value whose
  format makes it a credential with no reading needed (a documented token prefix or structure, a
  private key with its key material, a connection string or URL holding a key or password, an HTTP
  credential after its scheme: pwh._core.boundary.credential_values) is judged as RFC wherever it
  turns up, in any spelling pwh's scanner reads (look-alike, full-width or invisible characters).
  Each value is the first of its format in pwh's labelled corpus, never spelled out here (as a Todo
  identity, the first that fits the receipt contract's 128 characters: a longer one is refused with
  the receipt, before any hook could see it). How an implementation keeps a credential out of a hook's
  input (refusing the input, or any other way) is open; that the reference refuses it is pwh's reading.

  @M13
  Scenario Outline: a credential in an open payload is never journaled
    Given the post-writeback phase is enabled
    And hook "a.open" is installed for an intent kind whose payload takes any JSON, and proposes <credential> under a plain key
    When the orchestrator commits a todo_completed writeback
    Then nothing the dispatcher recorded, reported or handed a hook carries a private value
    And hook "a.open" ends with failure code "result_contract_rejected"

    Examples:
      | credential                                        |
      | an Azure storage connection string                |
      | an Azure shared access signature                  |
      | an age secret key                                 |
      | an Atlassian API token                            |
      | a Databricks token                                |
      | a Discord bot token                               |
      | a DigitalOcean token                              |
      | a Mailchimp key                                   |
      | a Vault token                                     |
      | an AWS access key                                 |
      | a GitHub token                                    |
      | a GitLab token                                    |
      | a Slack token                                     |
      | a Stripe secret key                               |
      | an OpenAI key                                     |
      | a Google API key                                  |
      | a JSON web token                                  |
      | a PyPI token                                      |
      | an npm token                                      |
      | a Hugging Face token                              |
      | a SendGrid key                                    |
      | a Telegram bot token                              |
      | a private key with its key material               |
      | a PGP private key with its key material           |
      | a database URL with its password                  |
      | a connection string with a password               |
      | a Basic authorization header with its credentials |
      | a bearer token                                    |
      | a GitHub token spelled with look-alike letters    |
      | an AWS access key in full-width letters           |
      | an AWS access key with invisible characters       |

  @M13
  Scenario Outline: a credential as a receipt's Todo identity is never handed to a hook nor journaled
    Given the post-writeback phase is enabled
    And hook "a.reporter" is installed and proposes one intent
    When a committed receipt whose Todo identity is <credential> is dispatched
    Then nothing the dispatcher recorded, reported or handed a hook carries a private value
    And by pwh's reading, hook "a.reporter" ends with failure code "input_boundary_rejected"

    Examples:
      | credential                                        |
      | an Azure storage connection string                |
      | an age secret key                                 |
      | a Databricks token                                |
      | a Discord bot token                               |
      | a DigitalOcean token                              |
      | a Mailchimp key                                   |
      | a Vault token                                     |
      | an AWS access key                                 |
      | a GitHub token                                    |
      | a GitLab token                                    |
      | a Slack token                                     |
      | a Stripe secret key                               |
      | an OpenAI key                                     |
      | a Google API key                                  |
      | a JSON web token                                  |
      | a PyPI token                                      |
      | an npm token                                      |
      | a Hugging Face token                              |
      | a SendGrid key                                    |
      | a Telegram bot token                              |
      | a private key with its key material               |
      | a database URL with its password                  |
      | a connection string with a password               |
      | a Basic authorization header with its credentials |
      | a bearer token                                    |
      | a GitHub token spelled with look-alike letters    |
      | an AWS access key in full-width letters           |
      | an AWS access key with invisible characters       |
