"""Binds every feature file to the step library. The features directory is the ini option
``bdd_features_base_dir`` (``features/`` here; ``pwh gate --features DIR`` points it elsewhere)."""

from pytest_bdd import scenarios

scenarios(".")
