"""Results of ``pwh mutate`` (score.json, survivors.md) and the campaign's pytest plugin."""
