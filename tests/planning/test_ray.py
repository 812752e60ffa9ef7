"""Runs on a real local Ray instance give the local pool's result byte for byte.

Ray comes from the lock (requirements/test.txt); without it the test is skipped with the reason, except in CI
(CI=true), where a missing Ray is a failure.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kueueplan.planning.executors import run_local, run_ray
from kueueplan.planning.montecarlo import aggregate
from kueueplan.planning.source import ScenarioSource

from ._support import scenario, write


def _ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but Ray is not installed: scripts/setup installs it from the lock")
        pytest.skip("Ray is not installed (pip install 'kueueplan[ray]', or ./scripts/setup)")


def test_ray_and_the_local_pool_agree_byte_for_byte(tmp_path: Path) -> None:
    _ray()
    source = ScenarioSource.load(write(tmp_path, scenario(expectations=[
        {"namespace": "team-a", "admittedWithin": "15m", "probability": 0.5}])))
    scenario_ = source.sample(0, 0)
    seen: list[int] = []
    on_ray = run_ray(source, 5, 10, "local", progress=lambda done, total: seen.append(done))
    local = run_local(source, 5, 10, workers=2)
    assert [m.run for m in on_ray] == list(range(10)) and seen[-1] == 10
    dump = lambda runs: json.dumps(aggregate(source, scenario_, 5, runs), indent=2)  # noqa: E731
    assert dump(on_ray) == dump(local)
