"""Judging an implementation: rows and rules, the gate and its pytest plugin, reports, the public
packet, the scenario check, divergences, coverage notes and the shared example builders.

Imports the core and the SUT seam; never the campaigns above it.
"""
