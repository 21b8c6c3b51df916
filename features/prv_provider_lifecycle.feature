Feature: PRV-1 — provider lifecycle: declared → installed → enabled → ready
  Four different questions, refused at registration time when out of order (seed 003, experiment A).

  @PRV-1
  Scenario Outline: an out-of-order lifecycle is refused at registration
    When a provider is registered with <set> set and <unset> unset
    Then the registry rejects the provider at "<path>"

    Examples:
      | set                            | unset                      | path       |
      | enabled                        | declared, installed, ready | $.enabled  |
      | declared and enabled           | installed, ready           | $.enabled  |
      | installed                      | declared, enabled, ready   | $.installed |
      | declared, installed and ready  | enabled                    | $.ready    |

  @PRV-1 @smoke
  Scenario Outline: an in-order lifecycle registers at its furthest stage
    When a provider is registered with <set> set and <unset> unset
    Then the provider is registered at stage "<stage>"

    Examples:
      | set                                    | unset                     | stage     |
      | declared                               | installed, enabled, ready | declared  |
      | declared and installed                 | enabled, ready            | installed |
      | declared, installed, enabled and ready | none                      | ready     |

  @PRV-1 @smoke
  Scenario: a provider cannot skip a stage on its way to ready
    When the provider is moved straight from declared to ready
    Then the move is refused with code "provider_transition_skipped" and the provider stays "declared"
