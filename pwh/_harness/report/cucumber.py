"""Cucumber JSON, the format CI dashboards read: features, then scenarios, then steps, with tags.

Rendered from the saved verdict alone: each scenario's steps are the ones the gate recorded in
the verdict (``scenarios[].steps``), so a verdict written by ``pwh gate --json`` renders again to
the same bytes the gate wrote."""

from __future__ import annotations

import json
from typing import Any

from pwh._harness.report._common import difference_line, one_line


def cucumber_json(verdict: dict[str, Any]) -> str:
    """Cucumber JSON (the format CI dashboards read): features → scenarios → steps, with tags. A
    skipped scenario's steps are ``skipped`` (the step that found the case inexpressible carries
    the reason); the two verdicts and any profile divergence are in the scenario's description.

    Each scenario's steps are the verdict's own (``scenarios[].steps``; none for a scenario that
    records none), so a saved verdict renders exactly as the live run did."""
    features: dict[str, dict[str, Any]] = {}
    for x in verdict["scenarios"]:
        uri = x.get("feature", "unknown.feature")
        feature = features.setdefault(
            uri,
            {
                "uri": uri,
                "id": uri.rsplit("/", 1)[-1].removesuffix(".feature"),
                "keyword": "Feature",
                "name": x.get("feature_name", uri),
                "line": 1,
                "description": "",
                "tags": [],
                "elements": [],
            },
        )
        skipped = x.get("outcome") == "skipped"
        element_steps = []
        for step in x.get("steps", []):
            # Cucumber has no "not run": a step after a failure or a skip is skipped there.
            result: dict[str, Any] = {"status": "skipped" if step["status"] == "not run" else step["status"]}
            if skipped and step["status"] != "passed":
                result["status"] = "skipped"
                if step["status"] in ("skipped", "failed"):  # the step that found the case inexpressible
                    result["error_message"] = x.get("reason", "skipped")
            elif step["status"] == "failed":
                result["error_message"] = one_line(x)
            element_steps.append({"keyword": step["keyword"] + " ", "name": step["text"], "line": step.get("line", 0), "result": result})
        description = x.get("params", "")
        judged = f"RFC {x.get('rfc', '?')}, profile {x.get('profile', '?')}, counts for {x.get('counts_for', 'sut')}"
        notes = [judged] + [
            f"profile divergence: expected {d['expected']}, saw {d['seen']}"
            + (f"; differs at {difference_line(d)}" if difference_line(d) else "")
            for d in x.get("divergences", [])
        ]
        if skipped:
            notes.append(f"skipped: {x.get('reason', '')}")
        feature["elements"].append(
            {
                "keyword": "Scenario",
                "id": x["id"],
                "name": x.get("scenario", x["id"]),
                "line": x.get("line", 0),
                "description": "\n".join(filter(None, [description, *notes])),
                "type": "scenario",
                "tags": [{"name": "@" + t, "line": max(0, x.get("line", 1) - 1)} for t in x.get("tags", [])],
                "steps": element_steps,
            }
        )
    return json.dumps([features[k] for k in sorted(features)], indent=2, ensure_ascii=False) + "\n"
