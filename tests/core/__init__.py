"""Unit and property tests of the reference dispatcher's core (pwh/_core)."""
