"""The harness: the packet, the scenario check, the CLI's hostile inputs, divergences, mutation bookkeeping."""
