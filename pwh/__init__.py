"""pwh: verification harness for the RFC 'Provider-Neutral Post-Writeback Capability Hooks v0'."""

__version__ = "0.1.0"
__all__ = ["__version__"]
