"""Whole `pwh gate` runs (the slowest tests): the reference's verdict and coverage, hollow and broken SUTs."""
