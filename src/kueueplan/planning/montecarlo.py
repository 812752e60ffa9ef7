"""N runs of one scenario, aggregated into the Monte-Carlo result (docs/planning.md documents every field).

Per team, ClusterQueue and flavor: wait p50/p95/p99 (each run's nearest-rank percentile, averaged over runs,
with a normal 95% confidence interval of that mean), preemptions per run, time-averaged and peak usage
against nominal quota; per expectation the share of runs in which it held, with a Wilson 95% interval, and
whether that meets its required probability. Only integers and sorted keys feed it, and floats are rounded
at the end, so the same runs give the same bytes whichever executor produced them.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from kueueplan.kube.quantity import is_cpu
from kueueplan.kube.apiversion import KUEUEPLAN_API
from kueueplan.planning.metrics import RunMetrics, WorkloadOutcome
from kueueplan.planning.source import ScenarioSource
from kueueplan.report.simulation import _percentile

Z = 1.959963984540054  # two-sided 95%
QUANTILES = (50, 95, 99)


def aggregate(source: ScenarioSource, scenario: Any, seed: int, runs: list[RunMetrics]) -> dict[str, Any]:
    n = len(runs)
    return {
        "apiVersion": KUEUEPLAN_API,
        "kind": "MonteCarloResult",
        "scenario": scenario.name,
        "runs": n,
        "seed": seed,
        "teams": _groups(runs, lambda w: w.team, "team"),
        "clusterQueues": _groups(runs, lambda w: w.cluster_queue, "clusterQueue"),
        "flavors": _flavors(runs),
        "expectations": _expectations(source, scenario, runs),
    }


def failed(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in result["expectations"] if not e["met"]]


def _groups(runs: list[RunMetrics], key: Callable[[WorkloadOutcome], str], label: str) -> list[dict[str, Any]]:
    names = sorted({key(w) for m in runs for w in m.workloads if key(w)})
    out = []
    for name in names:
        per_run = [[w for w in m.workloads if key(w) == name] for m in runs]
        waits = {q: [_percentile([w.wait_ms for w in ws], q) for ws in per_run if ws] for q in QUANTILES}
        count = [len(ws) for ws in per_run]
        admitted = sum(w.admitted for ws in per_run for w in ws)
        preemptions = [sum(w.preempted for w in ws) for ws in per_run]
        out.append({
            label: name,
            "workloadsPerRun": _r(sum(count) / len(runs)),
            "admittedShare": _r(admitted / sum(count)) if sum(count) else None,
            "waitSeconds": {f"p{q}": _mean_ci([v / 1000 for v in waits[q] if v is not None]) for q in QUANTILES},
            "preemptionsPerRun": {"mean": _r(sum(preemptions) / len(runs)), "max": max(preemptions)},
        })
    return out


def _flavors(runs: list[RunMetrics]) -> list[dict[str, Any]]:
    keys = sorted({(f, r) for m in runs for f, rs in m.quota.items() for r in rs}
                  | {(f, r) for m in runs for f, rs in m.usage.items() for r in rs})
    out = []
    for flavor, resource in keys:
        unit = 1000 if is_cpu(resource) else 1
        avgs = [m.usage.get(flavor, {}).get(resource, (0.0, 0))[0] / unit for m in runs]
        peaks = [m.usage.get(flavor, {}).get(resource, (0.0, 0))[1] / unit for m in runs]
        quota = runs[0].quota.get(flavor, {}).get(resource, 0) / unit if runs else 0
        out.append({
            "flavor": flavor, "resource": resource, "quota": _r(quota),
            "timeAveraged": _mean_ci(avgs),
            "peak": {"mean": _r(sum(peaks) / len(peaks)), "max": _r(max(peaks))},
            "timeAveragedShareOfQuota": _r(sum(avgs) / len(avgs) / quota) if quota else None,
        })
    return out


def _expectations(source: ScenarioSource, scenario: Any, runs: list[RunMetrics]) -> list[dict[str, Any]]:
    out = []
    n = len(runs)
    for i, exp in enumerate(scenario.expectations):
        held = sum(1 for m in runs if m.expectations[i])
        required = source.probabilities.get(i, 1.0)
        out.append({
            "expectation": exp.describe() + _terms(exp),
            "line": exp.line,
            "held": held,
            "probability": _r(held / n),
            "ci95": [_r(x) for x in _wilson(held, n)],
            "required": required,
            "met": held / n >= required - 1e-12,
        })
    return out


def _terms(exp: Any) -> str:
    from kueueplan.simulate.result import _fmt

    parts = []
    if exp.admitted_within is not None:
        parts.append(f"admittedWithin {_fmt(exp.admitted_within)}")
    if exp.finished_by is not None:
        parts.append(f"finishedBy {_fmt(exp.finished_by)}")
    if exp.never_preempted:
        parts.append("neverPreempted")
    if getattr(exp, "preempted", False):
        parts.append("preempted")
    if getattr(exp, "evicted", None):
        parts.append(f"evicted {exp.evicted}")
    if exp.state:
        parts.append(f"state {exp.state}")
    return ": " + ", ".join(parts) if parts else ""


def _mean_ci(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"mean": None, "ci95": None}
    mean = math.fsum(values) / len(values)
    if len(values) < 2:
        return {"mean": _r(mean), "ci95": None}
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = Z * sd / math.sqrt(len(values))
    return {"mean": _r(mean), "ci95": [_r(max(0.0, mean - half)), _r(mean + half)]}


def _wilson(k: int, n: int) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + Z * Z / n
    centre = (p + Z * Z / (2 * n)) / denom
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _r(x: float | None) -> float | None:
    """Rounded for stable output; whole numbers stay integers."""
    if x is None:
        return None
    x = round(x, 3)
    return int(x) if x == int(x) else x
