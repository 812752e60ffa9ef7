"""Seeded draws that give the same numbers on every machine, Python build and executor.

Each run gets its own `random.Random`, seeded from (seed, run index) through SHA-256, so run i is the same
whether it runs first in one process or last on a Ray worker. Times are rounded to whole milliseconds (the
simulator's unit), which also absorbs last-bit differences between platforms' libm.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from typing import Any, Mapping

from kueueplan.errors import KueueplanError
from kueueplan.simulate.scenario import parse_duration

_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*/\s*(d|h|m|s|day|hour|min|minute|second)\s*$")
_PER_MS = {"d": 86_400_000, "day": 86_400_000, "h": 3_600_000, "hour": 3_600_000, "m": 60_000, "min": 60_000,
           "minute": 60_000, "s": 1000, "second": 1000}
Z95 = 1.6448536269514722  # standard normal quantile of 0.95: p95 = median * exp(Z95 * sigma)


def run_rng(seed: int, run: int, stream: str = "load") -> random.Random:
    """The generator of one run: independent of which process or machine runs it."""
    digest = hashlib.sha256(f"kueueplan/{stream}/{seed}/{run}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def parse_rate(value: Any, what: str) -> float:
    """'6/h', '0.5/m', '20/d' or a number per hour -> arrivals per millisecond."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        per_hour = float(value)
    elif isinstance(value, str) and (m := _RATE.match(value)):
        per_hour = float(m.group(1)) * 3_600_000 / _PER_MS[m.group(2)]
    else:
        raise KueueplanError(f"{what}: {value!r} is not a rate", hint="write e.g. 6/h, 0.5/m or 20/d")
    if not math.isfinite(per_hour) or per_hour <= 0:
        raise KueueplanError(f"{what}: a rate must be positive, got {value!r}")
    return per_hour / 3_600_000


class Duration:
    """A run time: fixed, log-normal from a median and a p95, or drawn from empirical samples."""

    def __init__(self, spec: Any, what: str) -> None:
        self.fixed: int | None = None
        self.samples: list[int] = []
        self.mu = self.sigma = 0.0
        self.cap: int | None = None
        if not isinstance(spec, Mapping):
            self.fixed = parse_duration(spec, what)
            return
        unknown = set(spec) - {"median", "p95", "samples", "max"}
        if unknown:
            raise KueueplanError(f"{what}: unknown field(s) {', '.join(sorted(unknown))}",
                                 hint="a run-time distribution has median and p95, or samples; max caps it")
        if "max" in spec:
            self.cap = parse_duration(spec["max"], f"{what}.max")
        if "samples" in spec:
            if not isinstance(spec["samples"], list) or not spec["samples"] or set(spec) & {"median", "p95"}:
                raise KueueplanError(f"{what}.samples must be a non-empty list of durations (without median/p95)")
            self.samples = [parse_duration(s, f"{what}.samples") for s in spec["samples"]]
            return
        if "median" not in spec or "p95" not in spec:
            raise KueueplanError(f"{what}: a distribution needs median and p95 (or samples)",
                                 hint="e.g. runFor: {median: 20m, p95: 1h}")
        median = parse_duration(spec["median"], f"{what}.median")
        p95 = parse_duration(spec["p95"], f"{what}.p95")
        if median <= 0 or p95 < median:
            raise KueueplanError(f"{what}: needs 0 < median <= p95, got median {spec['median']}, p95 {spec['p95']}")
        self.mu, self.sigma = math.log(median), math.log(p95 / median) / Z95

    def draw(self, rng: random.Random) -> int:
        if self.fixed is not None:
            return self.fixed
        value = rng.choice(self.samples) if self.samples else round(math.exp(rng.gauss(self.mu, self.sigma)))
        return min(value, self.cap) if self.cap is not None else value


def weighted_choice(rng: random.Random, weights: list[float]) -> int:
    """Index drawn with the given relative weights (all zero: uniform), as kueue-bench picks its mix."""
    total = sum(weights)
    if total <= 0:
        return rng.randrange(len(weights))
    x = rng.random() * total
    for i, w in enumerate(weights):
        x -= w
        if x < 0:
            return i
    return len(weights) - 1
