"""The campaigns: stateful crash/replay models of the post-writeback hooks, end to end.

Hypothesis drives the fake orchestrator and the SUT seam through completions, replans, plain
progress, replays, second deliveries, crashes at every named point (simulated, or a real SIGKILL
of a child process) and restarts, installing hooks of every behaviour (several of one
capability, one that writes into its input), offering bad receipts and bad registrations,
changing the profile between dispatches and moving policy versions; after every step the
invariants of ``models.invariants`` are judged, each declared RFC (with the clauses that require it) or
profile (pwh's reading). A broken RFC invariant fails the run, which is shrunk and written as a
JSON trace and a Gherkin scenario (``counterexamples``); a broken profile invariant is a
profile divergence, counted apart and never a failure.

Entry points: ``models.machine.run_model``, ``counterexamples.trace.replay_trace``,
``soak.soak``, ``differential.differential_soak``, and ``commands`` (``pwh soak``, ``pwh replay``).
The package imports nothing itself, so a command that needs none of them does not pay for
Hypothesis.
"""
