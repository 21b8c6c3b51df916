"""M13 in RFC terms: a credential of a certain format handed to a hook or journaled fails the RFC
verdict; what the RFC does not name only diverges from pwh's reading.

§7 "Input 必须排除 … credential …", §9 "Journal … 不保存 … credential" and §12 M13 ("无私有名称、URL、
路径、credential…") make a credential anywhere in a hook input or the journal an RFC failure: with
open payloads, an implementation that journals what a hook proposes, or hands a hook a Todo identity
as it came, must fail (features/m13_kept_out.feature, the corpus scenario). What only looks
private (an auth scheme with no credential, the loopback name, an environment variable's name, a
field named HOME), what pwh keeps as public and the nesting limit's exact number are pwh's readings:
an implementation that differs there passes the RFC verdict with profile divergences, while one
whose bound raises into the host or leaves more than a compact code still fails it.

The gate runs in a child pytest, as ``pwh gate`` does; the SUTs below are loaded from this module.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from pwh import BoundaryScanner, Dispatcher, Finding, ReferenceSUT
from pwh._core.boundary import credential_values
from pwh._harness.gate import Pick, run_gate
from pwh._suts.mutants._one_method import _LowerNestingBound, _nesting

# `extended` (CI runs it after the test command): eight gate runs over every credential kind; M13's teeth (a broken adapter that journals a credential) and the reference's M13 rows are in the test command (tests/whole_gate/).
pytestmark = pytest.mark.extended

FEATURES = Path(__file__).resolve().parents[2] / "features"
HERE = __name__

# The kinds the brief of this change named, each of which a clean-room implementation journaled
# with the RFC verdict still green.
NAMED_KINDS = (
    "an Azure storage connection string",
    "an age secret key",
    "an Atlassian API token",
    "a Databricks token",
    "a Discord bot token",
    "a GitHub token",
    "an AWS access key",
    "a private key with its key material",
)


def _outline(feature: str, title: str) -> Pick:
    """The scenario or outline titled ``title`` (every example of an outline)."""
    lines = (FEATURES / feature).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if re.fullmatch(rf"\s*Scenario(?: Outline)?: {re.escape(title)}\s*", line):
            return Pick(f"features/{feature}", number)
    raise LookupError(f"{feature} has no scenario titled {title!r}")


JOURNAL_SIDE = _outline("m13_kept_out.feature", "a credential in an open payload is never journaled")
INPUT_SIDE = _outline("m13_kept_out.feature", "a credential as a receipt's Todo identity is never handed to a hook nor journaled")
CORPUS = _outline("m13_corpus.feature", "each private value of the corpus fails the hook that proposed it and none is recorded")
SAMPLE_RESULTS = _outline("m13_mutants.feature", "an intent whose detail carries a private value is rejected, naming what it found")
SAMPLE_INPUTS = _outline("m13_mutants.feature", "an input whose Todo identity is a private value is never handed to the hook")
OPEN_SHAPES = _outline("m13_shapes.feature", "a private value in an open payload is refused at the field that holds it")
KEPT_AS_PUBLIC = _outline("m13_shapes.feature", "an open payload that carries nothing private is recorded")
NESTING = _outline("m13_shapes.feature", "an open payload is judged by the nesting limit exactly at its edge")
CREDENTIAL_EXPECTED = "no credential in any hook input, the journal or the dispatch outcomes"


# -- SUTs ----------------------------------------------------------------------------------------


class _CredentialsOnly(BoundaryScanner):
    """A public-boundary scan that finds the credentials of a certain format and nothing else: the
    least an implementation must keep out (§7, §9, §12 M13)."""

    def scan_value(self, value: Any, path: str = "$") -> list[Finding]:
        return [Finding("credential", c.path) for c in credential_values(value, path)]

    def public_path(self, path: str) -> str:
        return path if "[?]" in path or path == "$" else BoundaryScanner.public_path(self, path)


class _CredentialsOnlyDispatcher(Dispatcher):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scanner = _CredentialsOnly()

    def _accept_fast(self, value: Any, reg: Mapping[str, Any], did: str) -> Any:
        return None  # the one-pass check reads the full rules: every result takes the general path


class CredentialsOnly(ReferenceSUT):
    name = "test:credentials_only"
    dispatcher_class = _CredentialsOnlyDispatcher


class _DeepRaises(_LowerNestingBound):
    """pwh's lower-bound mutant, but a result past its bound raises out of the dispatch, into the host."""

    def _judge_in_full(self, value: Any, reg: Mapping[str, Any], did: str) -> Any:
        if _nesting(value) > self.BOUND:
            raise RecursionError("maximum recursion depth exceeded while judging a result")
        return super()._judge_in_full(value, reg, did)


class _DeepSpelledOut(_LowerNestingBound):
    """pwh's lower-bound mutant, but a result past its bound fails the hook with the error's text as its code."""

    def _finish_hook(self, pending: Any, verdict: Any, tally: Any) -> Any:
        if verdict.kind != "returned" or _nesting(verdict.value) <= self.BOUND:
            return super()._finish_hook(pending, verdict, tally)
        pending.attempts += 1
        return self._fail(pending, "RecursionError: maximum recursion depth exceeded at $.intents[0].payload.deep")


class DeepRaises(ReferenceSUT):
    name = "test:deep_raises"
    dispatcher_class = _DeepRaises


class DeepSpelledOut(ReferenceSUT):
    name = "test:deep_spelled_out"
    dispatcher_class = _DeepSpelledOut


def credentials_only(**kw: Any) -> ReferenceSUT:
    return CredentialsOnly(**kw)


def deep_raises(**kw: Any) -> ReferenceSUT:
    return DeepRaises(**kw)


def deep_spelled_out(**kw: Any) -> ReferenceSUT:
    return DeepSpelledOut(**kw)


# -- the runs ------------------------------------------------------------------------------------

RUNS: dict[str, tuple[str, list[Pick]]] = {
    "reference": ("reference", [JOURNAL_SIDE, INPUT_SIDE, CORPUS, SAMPLE_RESULTS, SAMPLE_INPUTS, OPEN_SHAPES, NESTING]),
    "journals": ("mutant:journals_open_payloads", [JOURNAL_SIDE, CORPUS]),
    "hands_on": ("mutant:boundary_lets_paths_through", [INPUT_SIDE]),
    "credentials_only": (
        f"{HERE}:credentials_only",
        [JOURNAL_SIDE, INPUT_SIDE, SAMPLE_RESULTS, SAMPLE_INPUTS, OPEN_SHAPES, KEPT_AS_PUBLIC],
    ),
    "shallow": ("mutant:lower_nesting_bound", [NESTING]),
    "deep_raises": (f"{HERE}:deep_raises", [NESTING]),
    "deep_spelled_out": (f"{HERE}:deep_spelled_out", [NESTING]),
}


def _run(name: str) -> tuple[str, dict[str, Any]]:
    sut, selected = RUNS[name]
    return name, run_gate(sut, scenarios=list(selected), progress=False).verdict()


@pytest.fixture(scope="module")
def runs() -> dict[str, dict[str, Any]]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(_run, RUNS))


def _of(verdict: dict[str, Any], where: Pick) -> list[dict[str, Any]]:
    found = [s for s in verdict["scenarios"] if (s["feature"], int(s["line"])) == (where.feature, where.line)]
    assert found, f"no scenario ran at {where}"
    return found


# -- RFC: a credential handed on or journaled fails the implementation ---------------------------


def test_the_reference_passes_every_selected_scenario_on_both_verdicts(runs: dict[str, dict[str, Any]]) -> None:
    verdict = runs["reference"]
    assert verdict["summary"]["rfc"] == "pass" and verdict["summary"]["profile"] == "pass", verdict["summary"]
    assert all(s["outcome"] == "passed" and not s["divergences"] for s in verdict["scenarios"])
    assert len(_of(verdict, JOURNAL_SIDE)) >= 30 and len(_of(verdict, INPUT_SIDE)) >= 25


def test_an_implementation_that_journals_open_payloads_fails_the_rfc_verdict_on_each_credential(runs: dict[str, dict[str, Any]]) -> None:
    verdict = runs["journals"]
    assert verdict["summary"]["rfc"] == "fail" and verdict["rows"]["M13"]["rfc"] == "fail"
    scenarios = _of(verdict, JOURNAL_SIDE)
    assert {s["params"] for s in scenarios} >= set(NAMED_KINDS)
    for s in scenarios:  # every credential, each caught by the credential check itself
        assert s["outcome"] == "failed" and s["rfc"] == "fail", s["params"]
        assert s["expected"] == CREDENTIAL_EXPECTED and "$.journal[0].intents[0].payload.note" in s["seen"], s
        assert s["clause"].startswith("§7.input-excludes") and "§9.journal-contents" in s["clause"]


def test_the_corpus_credentials_an_implementation_journals_fail_the_rfc_verdict(runs: dict[str, dict[str, Any]]) -> None:
    """Before, every corpus check was profile: 180 private values journaled, the RFC verdict green."""
    (scenario,) = _of(runs["journals"], CORPUS)
    assert scenario["outcome"] == "failed" and scenario["rfc"] == "fail"
    assert scenario["expected"] == CREDENTIAL_EXPECTED and "$.journal[" in scenario["seen"]
    assert len(scenario["divergences"]) == 2  # the corpus's own checks, profile as before


def test_an_implementation_that_hands_a_hook_its_todo_identity_fails_the_rfc_verdict(runs: dict[str, dict[str, Any]]) -> None:
    scenarios = _of(runs["hands_on"], INPUT_SIDE)
    assert {s["params"] for s in scenarios} >= set(NAMED_KINDS) - {"an Atlassian API token"}  # too long for an identity
    for s in scenarios:
        assert s["outcome"] == "failed" and s["rfc"] == "fail", s["params"]
        assert s["expected"] == CREDENTIAL_EXPECTED and "$.hook_inputs[0].source.todo_id" in s["seen"], s
        assert "§7.input-excludes" in s["clause"]


# -- profile: what the RFC does not name never fails the RFC verdict ----------------------------


def _by_reading(scenario: dict[str, Any]) -> bool:
    return "by pwh's reading" in scenario["params"]


def test_keeping_only_credentials_out_passes_the_rfc_checks_of_every_look_alike(runs: dict[str, dict[str, Any]]) -> None:
    """An implementation that refuses exactly the credentials of a certain format records the auth
    scheme with no credential, the loopback name, an environment variable's name (B5-B7), network
    addresses, chat-role markup, a private key's header line and a field named HOME: each of those
    rows only diverges from pwh's reading, while a row whose sample the RFC names still fails."""
    verdict = runs["credentials_only"]
    looks = [s for s in _of(verdict, SAMPLE_RESULTS) + _of(verdict, SAMPLE_INPUTS) + _of(verdict, OPEN_SHAPES) if _by_reading(s)]
    assert len(looks) == 20 and all(s["rfc"] == "pass" for s in looks), [(s["params"], s.get("seen")) for s in looks if s["rfc"] != "pass"]
    diverging = {s["params"].split(",")[0] for s in looks if s["profile"] == "divergence"}
    for sample in (
        "an authorization header",
        "an upper-case authorization header",
        "a bare loopback host name",
        "an environment expansion",
        "a braced environment expansion",
        "a windows environment expansion",
        "a private key block",
        "a value under an environment variable's name",
    ):
        assert sample in diverging, sample
    named = {s["params"].split(",")[0]: s["rfc"] for s in _of(verdict, SAMPLE_RESULTS) if not _by_reading(s)}
    assert named["a posix path"] == named["a user line"] == named["a password assignment"] == "fail"
    assert named["an AWS access key"] == named["a bearer token"] == "pass"  # refused: a credential of a certain format
    assert all(s["rfc"] == "pass" for s in _of(verdict, JOURNAL_SIDE) + _of(verdict, INPUT_SIDE) + _of(verdict, KEPT_AS_PUBLIC))


def test_a_lower_nesting_bound_diverges_only_from_pwh_s_number(runs: dict[str, dict[str, Any]]) -> None:
    verdict = runs["shallow"]
    assert verdict["summary"]["rfc"] == "pass", verdict["summary"]
    at_edge = [s for s in _of(verdict, NESTING) if "60 lists" in s["params"]]
    assert at_edge and at_edge[0]["profile"] == "divergence"
    assert at_edge[0]["divergences"][0]["expected"] == "hook a.open proposed, its one intent recorded"


@pytest.mark.parametrize("name", ["deep_raises", "deep_spelled_out"])
def test_a_bound_that_escapes_into_the_host_or_leaves_more_than_a_code_fails_the_rfc_verdict(
    runs: dict[str, dict[str, Any]], name: str
) -> None:
    verdict = runs[name]
    assert verdict["summary"]["rfc"] == "fail"
    failed = [s for s in _of(verdict, NESTING) if s["rfc"] == "fail"]
    assert len(failed) == 2, [(s["params"], s["rfc"]) for s in _of(verdict, NESTING)]  # 60 and 61 levels: both past its 40
