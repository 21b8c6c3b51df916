"""The stateful crash/replay models: the step language, the system under the steps, and the invariants judged after each step."""
