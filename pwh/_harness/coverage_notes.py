"""Code of the reference the Gherkin matrix deliberately does not reach, and why.

Each entry is ``module::function``: every line or branch the matrix leaves uncovered must sit in
one of these functions (a test checks it against a real coverage run), and the reason says why it
is outside the RFC's behaviour. Unit tests cover them instead.
"""

OUTSIDE_RFC: dict[str, str] = {
    "pwh/_core/registry.py::_compiled": "the compiled-schema cache dropping its oldest entry past 128 distinct payload schemas (the matrix registers a handful); tests/core/test_contracts.py covers it",
    "pwh/_core/journal.py::_decode": "record corruption beyond a checksum mismatch (undecodable bytes, a record under another key): the matrix shows JNL-5 with a flipped byte; tests/core/test_journal.py covers the rest",
    "pwh/_core/journal.py::SQLiteJournal._connect": "the journal file cannot be opened at all: an operator fault before any dispatch",
    "pwh/_core/journal.py::SQLiteJournal._restore": "a removed journal that cannot be put back (its folder gone or read-only, or a file put in its place meanwhile): the matrix shows the restore; tests/core/test_journal_hostile.py the rest",
    "pwh/_core/journal.py::SQLiteJournal._write": "a write to a journal already found damaged or closed, and damage landing between a commit and its check: the matrix shows the damage found before the commit; tests/core/test_journal_hostile.py covers the rest",
    "pwh/_core/journal.py::SQLiteJournal.get_many": "an SQLite read error: same journal-error path as the matrix's corrupted record",
    "pwh/_core/journal.py::SQLiteJournal.records": "an SQLite read error while listing: harness-side read, not dispatch behaviour",
    "pwh/_core/journal.py::SQLiteJournal.commit": "a write error after BEGIN (e.g. disk full mid-insert): same journal_write_failed outcome the matrix shows for a read-only journal",
    "pwh/_core/journal.py::SQLiteJournal._abandon": "a failing ROLLBACK on an already broken connection",
    "pwh/_core/journal.py::SQLiteJournal.corrupt_last_record": "fault injection on an empty journal",
    "pwh/_core/journal.py::SQLiteJournal.tamper_last_record": "fault injection on an empty journal",
    "pwh/_core/journal.py::tampered": "fault injection on a record with no intent payload string to change; tests/core/test_journal.py covers it",
    "pwh/_core/memory_journal.py::MemoryJournal.tamper_last_record": "fault injection on an empty journal or a record with nothing to change (the matrix runs the SQLite journal)",
    "pwh/_core/journal.py::SQLiteJournal.close": "closing twice",
    "pwh/_core/canonical.py::quick_copy": "the quick copy meeting a dict changed by another thread while it is read (it then leaves the value to the path-naming copy); covered by tests/core/test_identity.py and tests/campaigns/test_reliability.py",
    "pwh/_core/canonical.py::_free_copy": "the uncounted copy's refusals (a value that is not JSON, too deep, or text with a lone surrogate) reach it only from a value no budget bounds, and every value a provider hands the matrix is bounded by its result budget (the counted copy, whose refusals the matrix reaches); tests/core/test_identity.py holds both copies to the path-naming one",
    "pwh/_core/canonical.py::_charge": "a counted copy with no budget: copies without one take the uncounted copy instead; tests/core/test_identity.py covers it",
    "pwh/_core/process_runner.py::_Worker.wake": "waking a worker ahead of its call, which the dispatcher no longer does (woken early, a worker spins while the attempt count is written); kept for a host driving the runner itself, tests/core/test_isolation.py covers it",
    "pwh/_core/process_runner.py::ProcessRunner.wake": "as _Worker.wake: no longer called by the dispatcher; tests/core/test_isolation.py covers it",
    "pwh/_core/canonical.py::_plain": "the path-naming copy runs only for values the quick copy is unsure of, so its accepting branches for plain scalars run only beside something unusual (a float next to a read-only view); tests/core/test_identity.py holds the two copies to the same answers",
    "pwh/_core/canonical.py::_items": "a dict changed by another thread while it is copied (a hostile producer); covered by tests/campaigns/test_reliability.py",
    "pwh/_core/canonical.py::_check_text": "a lone surrogate in a result string or key; covered by tests/campaigns/test_reliability.py",
    "pwh/_core/canonical.py::_refuse": (
        "the canonical encoder meeting a non-JSON object: dumps_plain is only given plain trees "
        "(to_plain's copies, packets pwh builds); tests/core/test_identity.py covers it"
    ),
    "pwh/_core/canonical.py::_encode": "a CPython without its C JSON accelerator (the standard encoder then makes the same bytes); tests/core/test_identity.py holds the two equal",
    "pwh/_core/canonical.py::_proxied_dict": "a read-only view over something other than a dict; covered by tests/campaigns/test_reliability.py",
    "pwh/_core/identity.py::dispatch_id": "the public, defensive form (it copies its input first); the dispatcher uses plain_dispatch_id on inputs it has validated, and tests/core/test_identity.py holds the two to the same digest",
    "pwh/_core/contracts.py::judge_validated_result": "a valid answer the one-pass check leaves to the full checks is one in Python's own shapes (tuples, read-only views, 1.0 for an integer), not JSON and so not an RFC case; tests/core/test_result_check.py and tests/core/test_dispatcher.py cover it",
    "pwh/_core/contracts.py::check_result": "the result check as one call: the reference dispatcher takes its two steps through its own seams (Dispatcher._accept_fast, Dispatcher._judge_in_full, which a test adapter replaces), so the matrix runs each step but never this composition of them; tests/core/test_result_check.py holds it to the general path's answers",
    "pwh/_core/dispatcher.py::Dispatcher._reserve_attempts": "a journal that answers a reservation for none of the hooks it was given (no journal of pwh's does): then none is called",
    "pwh/_core/dispatcher.py::Dispatcher._record": "a record commit that fails after the attempts were counted (the disk fills between the two writes): the matrix shows an unwritable journal failing the count first; tests/core/test_dispatcher.py and the reliability campaign's full disk cover it",
    "pwh/_core/dispatcher.py::Dispatcher._receipt_id_refusal": "a receipt whose own id is a private value (the orchestrator makes opaque ids); covered by tests/campaigns/test_reliability.py",
    "pwh/_core/contracts.py::_payload_rejections": "a payload validator that fails while it checks: the catalog refuses every schema it cannot resolve, so only a catalog built some other way reaches it; tests/core/test_hook_isolation.py covers it",
    "pwh/_core/dispatcher.py::Dispatcher._prepare_hook": "a hook id the dispatcher's scanner flags after install: the reference's registry refuses it at install with the same scanner, so only a host whose registry has no scanner, or whose dispatcher knows declared names the registry does not, reaches it; tests/core/test_hook_isolation.py covers it",
    "pwh/_core/process_runner.py::_sample_generator": "a stand-in generator, built only when a provider answers with one; tests/core/test_isolation.py judges every tagged value",
    "pwh/_core/process_runner.py::_Worker.answer": "a frame on the answer pipe with another call's token (only a provider writing to the pipe sends one): dropped, the worker retired; tests/core/test_hook_isolation.py",
    "pwh/_core/process_runner.py::ProcessBatch._kill_retired": "a worker retired because something of its call outlived it (a provider's leftover thread): tests/core/test_hook_isolation.py",
    "pwh/_core/process_runner.py::ProcessRunner._detach": "detaching a worker that is no longer the runner's current one (retired by a batch that closed after a newer one started)",
    "pwh/_core/process_runner.py::_Worker.send": "the worker gone before the hand-over (it died while idle): tests/core/test_isolation.py",
    "pwh/_core/process_runner.py::_Worker._frame": "bytes on the answer pipe that are not pwh's frames, or a frame read in parts: process plumbing; tests/core/test_isolation.py",
    "pwh/_core/process_runner.py::_Worker.kill": "the OS refusing a kill or group kill of a process already gone: process plumbing",
    "pwh/_core/process_runner.py::_Worker.stop": "the OS refusing to close or kill what is already gone: process plumbing",
    "pwh/_core/process_runner.py::_Worker._reap": "a killed worker not yet reaped on the first look, or stuck in the kernel: process plumbing",
    "pwh/_core/process_runner.py::_Worker._close_fds": "closing a descriptor already closed: process plumbing",
    "pwh/_core/process_runner.py::default_runner": "the thread runner chosen instead (asked for by its environment variable, or no fork on this platform): the quick models' thread-runner variants and tests/core/test_isolation.py run it",
    "pwh/_core/process_runner.py::_kill_all": "workers still alive at interpreter exit (the matrix closes its SUTs); tests/core/test_isolation.py's Ctrl-C case",
    "pwh/_core/process_runner.py::ProcessBatch.__init__": "an empty batch: the dispatcher starts a batch only for calls it will make",
    "pwh/_core/process_runner.py::ProcessBatch.next_verdict": "an answer the host cannot decode (only a worker whose pipe was written by someone else sends one); tests/core/test_isolation.py",
    "pwh/_core/process_runner.py::ProcessRunner._worker_for": "a worker found dead or still busy when the next batch starts (it died while idle, or a batch was abandoned without close); tests/core/test_isolation.py",
    "pwh/_core/process_runner.py::ProcessRunner._replace": "replacing a worker that is no longer the runner's current one (a batch closed after a newer one started)",
    "pwh/_core/process_runner.py::ProcessRunner._finish": "a runner garbage-collected with its worker alive (the matrix closes its SUTs); tests/core/test_isolation.py",
    "pwh/_core/schemas.py::_explain": "schema combinators (oneOf) appear only in the sidecar receipt schema, which the dispatcher builds itself and never has to reject",
}
