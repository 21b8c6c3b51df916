"""The pytest plugin the gate loads into its scenario run: it records, per scenario, its rule tag,
where it is, how it ended and (for a failure) what was expected and seen, and prints progress.

It runs inside the pytest process and writes one JSON file the gate reads back. Failure text is
reduced to the harness's own expected/seen lines; anything else is shown only as the exception's
type, so a report never carries raw exception text.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from pwh._core.boundary import BoundaryScanner
from pwh._harness.difference import LEAF_LIMIT, TEXT_LIMIT, Difference, cut_pair
from pwh._harness.gate import RELAY_MARK, Claims  # the gate's side of the relay and the queue (it never imports pytest)
from pwh._harness.paths import feature_label
from pwh._harness.rules import RULE_IDS
from pwh._harness.safe_text import for_terminal
from pwh._harness.step_lookup import memoise_step_lookup

RESULTS_OPTION = "--pwh-results"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(RESULTS_OPTION, default=None, help="where the pwh gate plugin writes its results")
    parser.addoption("--pwh-progress", default="1", help="print one line per scenario (1) or nothing (0)")
    parser.addoption(
        SELECT_OPTION,
        default=None,
        help="JSON list of FEATURE or FEATURE:LINE (relative to the features' parent) to run, or @FILE holding it",
    )
    parser.addoption(PREFLIGHT_OPTION, default=None, help="the whole features directory to check before any scenario runs")
    parser.addoption(SHARD_OPTION, default=None, help="I/N: run only every N-th selected scenario from the I-th (0-based)")
    parser.addoption(
        CLAIMS_OPTION,
        default=None,
        help="with --pwh-shard: the file the shards take their scenarios from, one at a time, instead of every N-th",
    )


SELECT_OPTION = "--pwh-select"
PREFLIGHT_OPTION = "--pwh-preflight"
SHARD_OPTION = "--pwh-shard"
CLAIMS_OPTION = "--pwh-claims"


def shard_of(text: str | None) -> tuple[int, int] | None:
    """``I/N`` as the gate passes it, or ``None`` (the whole selection)."""
    if not text:
        return None
    index, _, count = text.partition("/")
    i, n = int(index), int(count)
    if not 0 <= i < n:
        raise ValueError(f"shard {text!r}: not I/N with 0 <= I < N")
    return i, n


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``pwh gate FEATURE[:LINE]`` and ``--failed-in``: keep only what the gate picked, as
    ``[feature, line, example]`` (:class:`pwh._harness.gate.Pick`): a whole file (line null), a
    scenario at its own line, or one example of an outline (its index over the Examples rows)."""
    raw = config.getoption(SELECT_OPTION)
    if not raw:
        return
    if raw.startswith("@"):  # the gate passes its selection in a file (never too long for argv)
        raw = Path(raw[1:]).read_text("utf-8")
    wanted = {(*w, None, None)[:3] for w in map(tuple, json.loads(raw))}
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        where, line, example = _position(item)
        picked = {(where, None, None), (where, line, None), (where, line, example)} & wanted
        (keep if picked else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _position(item: pytest.Item) -> tuple[str | None, int | None, int | None]:
    """The item's feature file (as reports name it), its scenario's line and, for an outline's
    example, that example's index (pytest-bdd parametrizes the rows of every Examples in order)."""
    from pytest_bdd.scenario import scenario_wrapper_template_registry

    template = scenario_wrapper_template_registry.get(getattr(item, "obj", None))  # type: ignore[arg-type]
    if template is None:
        return None, None, None
    callspec = getattr(item, "callspec", None)
    example = callspec.indices.get("_pytest_bdd_example") if callspec is not None else None
    return feature_label(Path(template.feature.filename), _features_dir()), template.line_number, example


class _Recorder:
    def __init__(self, config: pytest.Config, out: Path) -> None:
        self.config = config
        self.out = out
        self.progress = config.getoption("--pwh-progress") != "0"
        self.relay = config.getoption("--pwh-progress") == "relay"
        self.shard = shard_of(config.getoption(SHARD_OPTION))
        claims = config.getoption(CLAIMS_OPTION)
        self.claims = Claims(Path(claims)) if claims and self.shard is not None else None
        self.collected: list[str] = []  # under a shard: every selected scenario in run order, the shares' merge key
        self.protocol_error_ids: list[str] = []  # under a shard: the scenario of each protocol error
        self.meta: dict[str, dict[str, Any]] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self.total = 0
        self.scanner = BoundaryScanner()
        self.safe_texts: dict[str, str] = {}
        self.collection_errors: list[str] = []
        self.matrix_problems: list[str] = []
        self.protocol_errors: list[str] = []  # the implementation answered outside the stdio protocol

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        preflight = self.config.getoption(PREFLIGHT_OPTION)
        try:
            if preflight:
                from pwh._harness.preflight import matrix_problems

                self.matrix_problems = matrix_problems(Path(preflight))
                if self.matrix_problems:  # the gate refuses the matrix: no scenario may run
                    self.config.hook.pytest_deselected(items=list(items))
                    items[:] = []
        finally:
            if self.claims is not None and preflight:  # the shard that checks the matrix opens (or shuts) the queue
                self.claims.open(refused=bool(self.matrix_problems) or not items)
        self.total = len(items)
        if self.claims is not None:
            # Every shard keeps the whole collection; which scenarios it runs is decided as it goes
            # (pytest_runtestloop): each takes the next one not yet taken, so the shards end together
            # whatever each scenario costs. The gate merges their records back in this order.
            self.collected = [_short_id(item.nodeid) for item in items]
        elif self.shard is not None:
            # Every share keeps every N-th scenario of the same collection, whole scenarios only (each
            # builds its own world): the shares are disjoint, together the whole selection, and of
            # nearly the same mix of features. The gate merges their records back in this order.
            index, count = self.shard
            self.collected = [_short_id(item.nodeid) for item in items]
            drop = [item for k, item in enumerate(items) if k % count != index]
            if drop:
                self.config.hook.pytest_deselected(items=drop)
                items[:] = [item for k, item in enumerate(items) if k % count == index]
        for item in items:
            tags = sorted(m.name for m in item.iter_markers() if m.name in RULE_IDS)
            self.meta[item.nodeid] = {"tags": tags, "params": _params(item)}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool | None:
        """A shard of a parallel gate with a claims file: run the scenarios this shard takes from
        the shared queue, in collection order, each taken one ahead of the one that runs (pytest
        tears a scenario down knowing the next). Otherwise pytest's own loop runs."""
        if self.claims is None or session.config.option.collectonly:
            return None
        if session.testsfailed and not session.config.option.continue_on_collection_errors:
            return None  # pytest's own loop stops the run for the collection errors
        items = session.items
        index = self.claims.take()
        while index is not None and index < len(items):
            after = self.claims.take()
            item = items[index]
            nextitem = items[after] if after is not None and after < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail:
                raise session.Failed(session.shouldfail)
            if session.shouldstop:
                raise session.Interrupted(session.shouldstop)
            index = after
        return True

    def pytest_bdd_before_scenario(self, request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
        meta = self.meta.setdefault(request.node.nodeid, {"tags": [], "params": ""})
        meta["feature"] = feature_label(Path(feature.filename), _features_dir())
        meta["feature_name"] = feature.name
        meta["line"] = scenario.line_number
        meta["scenario"] = scenario.name
        # Every step in order, as the verdict shows it: "not run" until it starts; then passed,
        # failed, or (the step that found the case inexpressible) skipped. Its text is scanned
        # like any other text a report carries.
        meta["steps"] = [
            {"keyword": s.keyword, "text": self._safe(s.name), "line": s.line_number, "status": "not run"} for s in scenario.steps
        ]

    def pytest_bdd_before_step(self, request: pytest.FixtureRequest, step: Any, **_: Any) -> None:
        self._step_status(request.node.nodeid, step, "not run", "running")

    def pytest_bdd_after_step(self, request: pytest.FixtureRequest, step: Any, **_: Any) -> None:
        self._step_status(request.node.nodeid, step, "running", "passed")

    def pytest_bdd_step_error(self, request: pytest.FixtureRequest, step: Any, exception: BaseException, **_: Any) -> None:
        self.meta.setdefault(request.node.nodeid, {})["failed_step"] = self._safe(f"{step.keyword} {step.name}".strip())
        self._step_status(request.node.nodeid, step, "running", "failed")

    def _step_status(self, nodeid: str, step: Any, was: str, status: str) -> None:
        for entry in self.meta.get(nodeid, {}).get("steps", []):
            if entry["line"] == step.line_number and entry["status"] == was:
                entry["status"] = status
                return

    def _settle_steps(self, nodeid: str) -> None:
        """Once the scenario has ended: in a skipped one, the step that stopped it was skipped
        (it raised the SUT's "unsupported", or skipped outright); a step still running when the
        scenario ended raised something else, so it failed."""
        skipped = self.results.get(nodeid, {}).get("outcome") == "skipped"
        for entry in self.meta.get(nodeid, {}).get("steps", []):
            if entry["status"] == "running" or (skipped and entry["status"] == "failed"):
                entry["status"] = "skipped" if skipped else "failed"

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append(_short_id(report.nodeid) or "collection")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
        outcome = yield
        report = outcome.get_result()
        result = self.results.setdefault(item.nodeid, {"outcome": "passed"})
        if report.when == "teardown":
            for key, value in item.user_properties:
                if key == "pwh" and isinstance(value, dict):
                    result["judgement"] = self._judgement(value)
        if report.skipped:
            result["outcome"] = "skipped"
            result["reason"] = self._safe(_skip_reason(report))
        elif report.failed:
            result["outcome"] = "failed"
            known = len(self.protocol_errors)
            result.update(self._failure(call.excinfo))
            self.protocol_error_ids += [_short_id(item.nodeid)] * (len(self.protocol_errors) - known)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.order.append(nodeid)
        self._settle_steps(nodeid)
        if not self.progress:
            return
        meta, result = self.meta.get(nodeid, {}), self.results.get(nodeid, {})
        mark = {"passed": "pass", "failed": "FAIL", "skipped": "skip"}.get(result.get("outcome", ""), "?")
        if mark in ("pass", "FAIL") and _counts_for({**meta, **result}) == "testbed":
            mark = "self" if mark == "pass" else "self-FAIL"  # pwh's own fakes, as the table counts it
        tag = ",".join(meta.get("tags", [])) or "untagged"
        name = meta.get("scenario", nodeid)
        params = meta.get("params") or ""
        text = f"{tag:<6} {mark:<4} {name}{' [' + params + ']' if params else ''}"
        if self.relay:  # the gate numbers it among every shard's lines
            sys.stdout.write(f"{RELAY_MARK}{self.total}\t{for_terminal(text)}\n")
        else:
            line = f"[{len(self.order):>3}/{self.total}] {text}"
            sys.stdout.write(for_terminal(line)[: terminal_width()] + "\n")  # a feature file's names never drive the terminal
        sys.stdout.flush()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        scenarios = []
        for nodeid in self.order:
            meta = self.meta.get(nodeid, {})
            scenarios.append({"id": _short_id(nodeid), **meta, **self.results.get(nodeid, {"outcome": "passed"})})
        payload = {
            "scenarios": scenarios,
            "collection_errors": self.collection_errors,
            "matrix_problems": self.matrix_problems,
            "protocol_errors": self.protocol_errors,
        }
        if self.shard is not None:
            payload["collected"] = self.collected
            payload["protocol_error_ids"] = self.protocol_error_ids
        self.out.write_text(json.dumps(payload, indent=1, sort_keys=True), "utf-8")
        stdio = sys.modules.get("pwh._suts.stdio.client")
        if stdio is not None:  # the implementations' processes end with the session, not only at exit
            stdio.shutdown()

    def _failure(self, excinfo: Any) -> dict[str, Any]:
        if excinfo is None:
            return {"expected": "the scenario to run", "seen": "a fixture or hook failed"}
        exc = excinfo.value
        expected, seen = getattr(exc, "expected", None), getattr(exc, "seen", None)
        if expected is not None:
            out: dict[str, Any] = dict(zip(("expected", "seen"), self._pair(str(expected), str(seen)), strict=True))
            difference = self._difference(getattr(exc, "difference", None))
            if difference is not None:
                out["difference"] = difference
            clause, about = getattr(exc, "clause", None), getattr(exc, "about", None)
            if isinstance(clause, str) and clause:
                out["clause"] = self._safe(clause)
            if about in ("sut", "testbed"):
                out["failed_about"] = about
            return out
        if type(exc).__name__ == "ProtocolError" and type(exc).__module__.startswith("pwh._suts.stdio"):
            self.protocol_errors.append(self._safe(str(exc)))
        out = {"expected": "the step to complete", "seen": f"it raised {type(exc).__name__}"}
        where = _adapter_frame(excinfo)
        if where:  # for `pwh smoke`: where in the adapter it raised (a module and line, never a path)
            out["raised_at"] = self._safe(where)
        return out

    def _judgement(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The world's account of a scenario, reduced to plain, public-safe fields."""
        divergences = [self._divergence(d) for d in raw.get("divergences", []) if isinstance(d, dict)]
        return {
            "reached": bool(raw.get("reached")),
            "judged_sut": bool(raw.get("judged_sut")),
            "turn_judged": bool(raw.get("turn_judged")),
            "divergences": divergences,
            "operations": _operation_names(raw.get("operations")),
            "answered": _operation_names(raw.get("answered")),
        }

    def _divergence(self, d: dict[str, Any]) -> dict[str, Any]:
        expected, seen = self._pair(str(d.get("expected", "")), str(d.get("seen", "")))
        out: dict[str, Any] = {"expected": expected, "seen": seen, "reading": self._safe(str(d.get("reading", "")))}
        difference = self._difference(d.get("difference"))
        if difference is not None:
            out["difference"] = difference
        return out

    def _pair(self, expected: str, seen: str, limit: int = TEXT_LIMIT) -> tuple[str, str]:
        """An expected and a seen text, each cut around the first character where they differ
        (never before it), then scanned."""
        cut_expected, cut_seen = cut_pair(expected, seen, limit)
        return self._scanned(cut_expected), self._scanned(cut_seen)

    def _difference(self, found: Any) -> dict[str, Any] | None:
        """Where a check's two values part (a :class:`Difference` or its dict), public-safe."""
        d = found.as_dict() if isinstance(found, Difference) else found
        if not isinstance(d, dict) or not all(isinstance(d.get(k), str) for k in ("path", "expected", "seen")):
            return None
        expected, seen = self._pair(d["expected"], d["seen"], LEAF_LIMIT)
        others = d.get("others")
        path = self._safe(d["path"])
        path = path if path.startswith("$") else "$"  # a path that would carry a private key is the whole value's
        return {"path": path, "expected": expected, "seen": seen, "others": others if isinstance(others, int) and others >= 0 else 0}

    def _safe(self, text: str) -> str:
        """The text, cut to its first TEXT_LIMIT characters, and scanned."""
        return self._scanned(text[:TEXT_LIMIT])

    def _scanned(self, text: str) -> str:
        """The text, or a withheld mark where it carries a private value; every answer is kept for
        the run: the matrix repeats the same step texts in hundreds of scenarios, and the scanner's
        answer depends on the text alone."""
        found = self.safe_texts.get(text)
        if found is None:
            found = self.safe_texts[text] = text if not self.scanner.scan_value(text) else "(withheld: it would carry a private value)"
        return found


def _counts_for(record: dict[str, Any]) -> str:
    """Whom a finished scenario counts for, judged as the verdict will judge it."""
    from pwh._harness.judging import judge_scenario

    try:
        return str(judge_scenario(record)["counts_for"])
    except (KeyError, TypeError, ValueError):
        return "sut"


def terminal_width() -> int:
    """The terminal's width for a progress line (160 where there is no terminal)."""
    import shutil

    return max(40, shutil.get_terminal_size((160, 24)).columns)


def _operation_names(value: Any) -> list[str]:
    """Seam operation names as the world reported them: identifiers only, nothing else passes."""
    if not isinstance(value, list):
        return []
    return sorted({v for v in value if isinstance(v, str) and len(v) <= 40 and v.replace(".", "_").isidentifier()})


def _adapter_frame(excinfo: Any) -> str | None:
    """``module:line`` of the innermost frame of the SUT's own adapter module in a raised
    exception's traceback (``PWH_SUT`` names it; a built-in name is mapped to its module)."""
    from pwh._suts.seam import adapter_target

    spec = os.environ.get("PWH_SUT", "")
    module = adapter_target(spec).partition(":")[0]
    if not module:
        return None
    found = None
    tb = getattr(excinfo, "tb", None)
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__")
        if name == module:
            found = f"{module}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _params(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return ""
    example = callspec.params.get("_pytest_bdd_example")
    if isinstance(example, dict):
        return ", ".join(f"{v}" for v in example.values())
    return ""


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return "skipped"


def _features_dir() -> Path:
    """The features directory the gate ran (``PWH_FEATURES``), else the project's."""
    return Path(os.environ.get("PWH_FEATURES") or Path(os.environ.get("PWH_FEATURES_ROOT", os.getcwd())) / "features")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything the run has made by now (the modules, the step library, the collected scenarios)
    lives until it ends: moved out of the collector's reach (``gc.freeze``), it is not traversed
    again by each full collection, in the scenario process or in a provider worker forked from it
    (measured over a serial run of the matrix: 0.51 -> 0.29 s of collections). What each scenario
    makes afterwards is collected as before."""
    gc.freeze()


def _short_id(nodeid: str) -> str:
    return nodeid.split("::", 1)[-1]


def pytest_configure(config: pytest.Config) -> None:
    _search_sut_dir_last()
    memoise_step_lookup()
    # pytest formats every failure's traceback for its terminal (the "long" style parses the source
    # of each frame: ~0.1 s a failure, most of a run where every scenario fails). The gate reads
    # the exception itself and shows no traceback, so the child asks for the cheap native text.
    config.option.tbstyle = "native"
    out = config.getoption(RESULTS_OPTION)
    if out:
        config.pluginmanager.register(_Recorder(config, Path(out)), "pwh-gate-recorder")


def _search_sut_dir_last() -> None:
    """The directory an explicit ``--sut module:factory`` was found in (``PWH_SUT_PATH``, set by
    the gate), searched after the standard library and site-packages, never ahead of them."""
    extra = os.environ.get("PWH_SUT_PATH", "")
    if extra and extra not in sys.path:
        sys.path.append(extra)
