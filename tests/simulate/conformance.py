"""The conformance matcher of ../shared/conformance/README.md, shared by the conformance and own-scenario tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import scenario_from_dict

_META = ("before", "after", "n")


def event_matches(event: dict[str, Any], want: dict[str, Any]) -> bool:
    for key, value in want.items():
        if key in _META:
            continue
        if key == "at":
            if not isinstance(event.get("at"), (int, float)) or abs(event["at"] - value) > 0.001:
                return False
        elif event.get(key) != value:
            return False
    return True


def _in_window(event: dict[str, Any], want: dict[str, Any]) -> bool:
    if want.get("before") is not None and not event["at"] < want["before"]:
        return False
    if want.get("after") is not None and not event["at"] > want["after"]:
        return False
    return True


def check(expect: dict[str, Any], out: dict[str, Any]) -> list[str]:
    """Every way `out` (the JSON result) disagrees with `expect`."""
    errors = []
    events = out["events"]
    by_name = {w["name"]: w for w in out["workloads"]}
    for want in expect.get("events") or []:
        if not any(event_matches(e, want) for e in events):
            errors.append(f"missing event {want}")
    for want in expect.get("absent") or []:
        for e in events:
            if _in_window(e, want) and event_matches(e, want):
                errors.append(f"unexpected event {e} (absent: {want})")
    for want in expect.get("counts") or []:
        n = sum(1 for e in events if _in_window(e, want) and event_matches(e, want))
        if n != want["n"]:
            errors.append(f"{n} events match {want}, expected {want['n']}")
    for name, state in (expect.get("final") or {}).items():
        got = by_name.get(name, {}).get("state")
        if got != state:
            errors.append(f"{name} ended {got}, expected {state}")
    for name, fields in (expect.get("fields") or {}).items():
        for key, value in fields.items():
            got = by_name.get(name, {}).get(key)
            if got != value:
                errors.append(f"{name}.{key} = {got!r}, expected {value!r}")
    for name, assignment in (expect.get("assignment") or {}).items():
        got = by_name.get(name, {}).get("assignment")
        if got != assignment:
            errors.append(f"{name} assignment {got}, expected {assignment}")
    return errors


def run_in_process(scenario: dict[str, Any]) -> dict[str, Any]:
    return result_json(simulate(scenario_from_dict(scenario)))


def run_cli(scenario: dict[str, Any], tmp: Path) -> tuple[int, dict[str, Any] | None, str]:
    """Write the scenario to a file and run `kueueplan simulate FILE -o json` as the contract says."""
    path = tmp / "scenario.yaml"
    path.write_text(yaml.safe_dump(scenario, sort_keys=False))
    proc = subprocess.run([sys.executable, "-c", "from kueueplan.cli import main; main()", "simulate", str(path), "-o", "json"],
                          capture_output=True, text=True, timeout=120, check=False)
    out = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None
    return proc.returncode, out, proc.stderr
