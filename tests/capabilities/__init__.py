"""The installed capabilities (periodic_report)."""
