"""Binds every feature file under features/ to the step library."""

from pytest_bdd import scenarios

scenarios("../features")
