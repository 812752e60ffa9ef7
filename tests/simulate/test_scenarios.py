"""Our own scenarios, ported from behaviours Kueue's scheduler, queue, preemption and integration tests
assert (each file names its source), checked with the conformance matcher."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.simulate.conformance import check, run_in_process

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    case = yaml.safe_load(path.read_text())
    out = run_in_process(case["scenario"])
    assert check(case["expect"], out) == [], case["source"]["test"]


def test_matcher_rejects_wrong_results() -> None:
    """The matcher itself must be able to fail (guards against a test that cannot fail)."""
    out = {"workloads": [{"name": "a/b", "state": "Admitted", "assignment": {"main": {"cpu": "f"}}}],
           "events": [{"at": 1, "type": "Admitted", "workload": "a/b"}]}
    assert check({"events": [{"at": 2, "type": "Admitted", "workload": "a/b"}]}, out)
    assert check({"absent": [{"type": "Admitted"}]}, out)
    assert not check({"absent": [{"type": "Admitted", "after": 1}]}, out)
    assert check({"counts": [{"type": "Admitted", "n": 2}]}, out)
    assert check({"final": {"a/b": "Finished"}}, out)
    assert check({"assignment": {"a/b": {"main": {"cpu": "g"}}}}, out)
    assert check({"fields": {"a/b": {"state": "Pending"}}}, out)
