"""Counterexamples: traces written, read and replayed, shrunk, and exported as Gherkin scenarios."""
