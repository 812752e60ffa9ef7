"""Quota search: the smallest nominal quotas for which every expectation holds with its required probability.

A variable is one ClusterQueue's nominal quota of one resource on one flavor, over a range of whole values
(`team-a/gpu-a100/nvidia.com/gpu=4..16`, `cq/default/memory=64Gi..256Gi:16`). Each candidate is judged by a
Monte-Carlo of the same runs (the same seeds: common random numbers, so candidates differ only by quota).

More quota helps the queue that gets it in the usual case, so the search bisects: about log2(n) candidates
instead of n. That is an assumption, not a law of Kueue (more quota for one queue lends more to borrowers,
who may then be preempted differently), so every judged candidate is kept, and a smaller value that passed
beside a larger one that failed is reported as non-monotone, with the values; `exhaustive` judges them all.
With several variables, all but the last form a grid and the last is searched per grid point: the table of
trade-offs between teams that share a cohort.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Callable

from kueueplan.errors import KueueplanError
from kueueplan.kube.apiversion import KUEUEPLAN_API
from kueueplan.planning.montecarlo import aggregate, failed
from kueueplan.planning.source import ScenarioSource

_VAR = re.compile(r"^([^/=\s]+)/([^/=\s]+)/([^=\s]+)=(\d+)([A-Za-z]*)\.\.(\d+)([A-Za-z]*)(?::(\d+))?$")
Runner = Callable[[ScenarioSource], list[Any]]


@dataclass(frozen=True)
class Variable:
    cluster_queue: str
    flavor: str
    resource: str
    values: tuple[int, ...]
    unit: str  # quantity suffix of every value (Gi, k, ...), or ""

    @property
    def label(self) -> str:
        return f"{self.cluster_queue}/{self.flavor}/{self.resource}"

    def quantity(self, value: int) -> str:
        return f"{value}{self.unit}"


def parse_variable(text: str) -> Variable:
    m = _VAR.match(text.strip())
    if not m:
        raise KueueplanError(f"--vary {text!r} is not CLUSTERQUEUE/FLAVOR/RESOURCE=LO..HI[:STEP]",
                             hint="e.g. --vary team-a/gpu-a100/nvidia.com/gpu=4..16")
    cq, flavor, resource, lo, lo_unit, hi, hi_unit, step = m.groups()
    if lo_unit != hi_unit:
        raise KueueplanError(f"--vary {text!r}: both ends need the same unit ({lo_unit or 'none'} vs {hi_unit or 'none'})")
    lo_i, hi_i, step_i = int(lo), int(hi), int(step or 1)
    if lo_i > hi_i or step_i < 1:
        raise KueueplanError(f"--vary {text!r}: needs LO <= HI and a positive STEP")
    values = tuple(range(lo_i, hi_i + 1, step_i))
    if len(values) > 100_000:
        raise KueueplanError(f"--vary {text!r}: {len(values):,} candidates; use a STEP")
    return Variable(cq, flavor, resource, values, lo_unit)


@dataclass
class Judged:
    assignment: tuple[int, ...]  # one value per variable
    result: dict[str, Any]  # the Monte-Carlo result

    @property
    def ok(self) -> bool:
        return not failed(self.result)


class Search:
    def __init__(self, source: ScenarioSource, variables: list[Variable], seed: int, runs: Runner,
                 exhaustive: bool = False, progress: Callable[[int], None] | None = None) -> None:
        self.source = source
        self.variables = variables
        self.seed = seed
        self.runs = runs
        self.exhaustive = exhaustive
        self.progress = progress
        self.judged: dict[tuple[int, ...], Judged] = {}
        self.metrics: dict[tuple[int, ...], list[Any]] = {}  # the runs behind each judged candidate

    def judge(self, assignment: tuple[int, ...]) -> Judged:
        if assignment not in self.judged:
            source = self.source
            for var, value in zip(self.variables, assignment):
                source = source.with_quota(var.cluster_queue, var.flavor, var.resource, var.quantity(value))
            scenario = source.sample(self.seed, 0)
            self.metrics[assignment] = self.runs(source)
            self.judged[assignment] = Judged(assignment, aggregate(source, scenario, self.seed, self.metrics[assignment]))
            if self.progress:
                self.progress(len(self.judged))
        return self.judged[assignment]

    def smallest(self, prefix: tuple[int, ...]) -> int | None:
        """The smallest value of the last variable that passes, given the others; None if none does."""
        values = self.variables[-1].values
        if self.exhaustive:
            passing = [v for v in values if self.judge(prefix + (v,)).ok]
            return passing[0] if passing else None
        if not self.judge(prefix + (values[-1],)).ok:
            return None
        lo, hi = 0, len(values) - 1  # values[hi] passes; find the first index that passes
        while lo < hi:
            mid = (lo + hi) // 2
            if self.judge(prefix + (values[mid],)).ok:
                hi = mid
            else:
                lo = mid + 1
        return values[lo]

    def run(self) -> dict[str, Any]:
        grid = list(itertools.product(*(v.values for v in self.variables[:-1])))
        rows = [{"values": {v.label: v.quantity(x) for v, x in zip(self.variables, prefix)},
                 "smallest": self._cell(self.smallest(prefix))} for prefix in grid]
        return {
            "apiVersion": KUEUEPLAN_API,
            "kind": "QuotaSearchResult",
            "scenario": self.source.sample(self.seed, 0).name,
            "seed": self.seed,
            "variables": [{"name": v.label, "from": v.quantity(v.values[0]), "to": v.quantity(v.values[-1]),
                           "candidates": len(v.values)} for v in self.variables],
            "searched": self.variables[-1].label,
            "method": "exhaustive" if self.exhaustive else "bisection",
            "tradeoffs": rows,
            "nonMonotone": self._non_monotone(),
            "judged": [{"values": [v.quantity(x) for v, x in zip(self.variables, j.assignment)], "ok": j.ok,
                        "expectations": [{"expectation": e["expectation"], "probability": e["probability"],
                                          "required": e["required"]} for e in j.result["expectations"]]}
                       for _, j in sorted(self.judged.items())],
        }

    def answer(self) -> Judged:
        """The first passing candidate (smallest values), else the largest judged: what the report charts."""
        ordered = sorted(self.judged.values(), key=lambda j: j.assignment)
        return next((j for j in ordered if j.ok), ordered[-1])

    def _cell(self, value: int | None) -> str | None:
        return None if value is None else self.variables[-1].quantity(value)

    def _non_monotone(self) -> list[str]:
        """Pairs of judged candidates (same other values) where the larger quota failed and the smaller passed."""
        out = []
        by_prefix: dict[tuple[int, ...], list[Judged]] = {}
        for j in self.judged.values():
            by_prefix.setdefault(j.assignment[:-1], []).append(j)
        last = self.variables[-1]
        for prefix, js in sorted(by_prefix.items()):
            js.sort(key=lambda j: j.assignment[-1])
            for small, big in itertools.combinations(js, 2):
                if small.ok and not big.ok:
                    out.append(f"{last.label}: {last.quantity(small.assignment[-1])} passes but "
                               f"{last.quantity(big.assignment[-1])} fails"
                               + (f" (with {', '.join(map(str, prefix))})" if prefix else ""))
        return out
