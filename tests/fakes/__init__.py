"""The fake orchestrator, host, providers, scheduler and sink (self-checks of the testbed)."""
