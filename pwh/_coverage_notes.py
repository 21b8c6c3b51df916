"""Branches of the reference the Gherkin matrix deliberately does not reach, and why: each is a
defence outside the RFC's behaviour (unit tests cover them), named in the gate report."""

OUTSIDE_RFC: dict[str, str] = {}
