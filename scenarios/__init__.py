"""The pytest-bdd bindings and the step library the Gherkin matrix runs on."""

# The modules holding step definitions; `pwh scenarios check` loads exactly these.
STEP_MODULES = (
    "steps_setup",
    "steps_turns",
    "steps_checks",
    "steps_seed003",
    "steps_models",
    "steps_limits",
    "steps_samples",
    "steps_outcome_report",
    "steps_isolation",
    "steps_corpus",
    "steps_writeback",
)
