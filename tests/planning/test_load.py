"""Stochastic load: seeded, deterministic, and distributed as declared."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.planning.load import expand_entries
from kueueplan.planning.sampling import Duration, run_rng
from kueueplan.planning.source import ScenarioSource

from ._support import JOB, scenario, write


def _times(entry: dict, seed: int = 0, run: int = 0) -> list[int]:
    plain, _ = expand_entries([dict(entry, manifest=JOB)], run_rng(seed, run), ("spec", "workloads"))
    return [int(p["at"][:-2]) for p in plain]


def test_same_seed_same_arrivals_and_runs_differ() -> None:
    entry = {"arrivals": {"poisson": "6/h"}, "for": "8h"}
    assert _times(entry, 0, 0) == _times(entry, 0, 0)
    assert _times(entry, 0, 0) != _times(entry, 0, 1)
    assert _times(entry, 0, 0) != _times(entry, 1, 0)


def test_poisson_rate_and_window() -> None:
    counts = [len(_times({"arrivals": {"poisson": "6/h"}, "for": "8h"}, run=r)) for r in range(300)]
    mean = statistics.fmean(counts)
    assert abs(mean - 48) < 3 * math.sqrt(48 / 300) + 0.5  # Poisson(48): mean 48, sd of the mean ~0.4
    assert statistics.pvariance(counts) == pytest.approx(48, rel=0.25)  # variance = mean for Poisson
    assert all(0 <= t < 8 * 3_600_000 for r in range(20) for t in _times({"arrivals": {"poisson": "6/h"}, "for": "8h"}, run=r))


def test_count_limits_and_start_offsets() -> None:
    times = _times({"arrivals": {"poisson": "1/m"}, "count": 5, "at": "1h"})
    assert len(times) == 5 and times == sorted(times) and times[0] >= 3_600_000
    assert _times({"arrivals": {"every": "10m"}, "count": 3}) == [0, 600_000, 1_200_000]


def test_daily_pattern_has_no_arrivals_in_zero_hours() -> None:
    hours = [0] * 9 + [1] * 8 + [0] * 7  # office hours only
    times = [t for r in range(30) for t in _times({"arrivals": {"daily": {"rate": "4/h", "hours": hours}}, "for": "24h"}, run=r)]
    assert times and all(9 <= (t // 3_600_000) % 24 < 17 for t in times)
    # mean rate 4/h over the day: 96 a day on average, all inside eight hours
    assert statistics.fmean([len(_times({"arrivals": {"daily": {"rate": "4/h", "hours": hours}}, "for": "24h"}, run=r))
                             for r in range(100)]) == pytest.approx(96, rel=0.1)


def test_bursts_arrive_together() -> None:
    times = _times({"arrivals": {"bursts": {"rate": "1/d", "size": 8, "within": "5m"}}, "count": 16})
    assert len(times) == 16
    assert times[7] - times[0] <= 300_000 and times[15] - times[8] <= 300_000


def test_lognormal_run_time_has_the_declared_median_and_p95() -> None:
    d = Duration({"median": "20m", "p95": "1h"}, "runFor")
    rng = run_rng(7, 0)
    draws = sorted(d.draw(rng) for _ in range(20_000))
    assert statistics.median(draws) == pytest.approx(1_200_000, rel=0.03)
    assert draws[int(0.95 * len(draws))] == pytest.approx(3_600_000, rel=0.05)
    capped = Duration({"median": "20m", "p95": "1h", "max": "30m"}, "runFor")
    assert max(capped.draw(rng) for _ in range(2000)) == 1_800_000
    samples = Duration({"samples": ["10m", "20m"]}, "runFor")
    assert {samples.draw(rng) for _ in range(100)} == {600_000, 1_200_000}


def test_expanded_copies_are_named_like_count(tmp_path: Path) -> None:
    source = ScenarioSource.load(write(tmp_path, scenario()))
    names = [t.name for t in source.sample(0, 0).workloads]
    assert names == [f"train-{i}" for i in range(1, len(names) + 1)] and len(names) > 20


@pytest.mark.parametrize("entry, words", [
    ({"arrivals": {"poisson": "six/h"}, "for": "1h"}, "not a rate"),
    ({"arrivals": {"poisson": "6/h"}}, "needs `for`"),
    ({"arrivals": {"poisson": "6/h", "every": "1m"}, "for": "1h"}, "exactly one"),
    ({"arrivals": {"poisson": "6/h"}, "for": "1h", "runFor": {"median": "1h", "p95": "10m"}}, "median <= p95"),
])
def test_bad_stochastic_entries_name_the_file_and_line(tmp_path: Path, entry: dict, words: str) -> None:
    path = write(tmp_path, scenario(workloads=[dict(entry, manifest=JOB)]))
    result = CliRunner().invoke(main, ["simulate", str(path)])
    assert result.exit_code == 2, result.output
    assert words in result.output and f"{path}:" in result.output and "Traceback" not in result.output
