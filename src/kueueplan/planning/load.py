"""Stochastic load -> plain arrivals, before the simulator reads the scenario.

A Scenario `workloads` entry (or a spec `load` entry, which compiles to one) describes a process instead of
fixed times when it has `arrivals` or a distribution as `runFor`:

    - arrivals: {poisson: 6/h}          # or {every: 10m}, {daily: {rate: 6/h, hours: [24 weights]}},
                                        #    {bursts: {rate: 2/d, size: 8, within: 10m}}
      at: 1h                            # optional start of the window (default 0)
      for: 8h                           # how long arrivals keep coming, and/or
      count: 20                         # how many arrive (the first N)
      runFor: {median: 20m, p95: 1h}    # or {samples: [10m, 25m, 1h]}, a fixed duration; `max` caps it
      manifest: {...}

Each arrival becomes a plain entry named <name>-1 .. <name>-N (as `count` names copies), with concrete `at`
and `runFor` in milliseconds. `spec.workloadProfiles: [FILE]` adds kueue-bench WorkloadProfiles as load
(docs/planning.md documents the mapping). Every other field passes through untouched, so the scenario reader
checks the result exactly as it checks a hand-written scenario.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.kube.podsets import QUEUE_LABEL
from kueueplan.kube.quantity import canonical, parse_quantity
from kueueplan.simulate.scenario import MAX_WORKLOADS, parse_duration
from kueueplan.planning.sampling import Duration, parse_rate, weighted_choice

STOCHASTIC_KEYS = ("arrivals", "for")
Where = tuple[str | int, ...]


def is_stochastic(entry: Any) -> bool:
    return isinstance(entry, Mapping) and ("arrivals" in entry or isinstance(entry.get("runFor"), Mapping))


class LoadError(KueueplanError):
    """A stochastic entry that cannot be expanded; `where` is its path in the scenario document."""

    def __init__(self, message: str, where: Where, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.where = where


def expand_entries(entries: list[Any], rng: random.Random, where: Where) -> tuple[list[Any], list[Where]]:
    """Plain entries for `entries`, and for each the path of the entry it came from (for error lines)."""
    out: list[Any] = []
    origins: list[Where] = []
    for i, entry in enumerate(entries):
        here = where + (i,)
        if not is_stochastic(entry):
            out.append(entry)
            origins.append(here)
            continue
        for plain in _expand(entry, rng, here):
            out.append(plain)
            origins.append(here)
            if len(out) > MAX_WORKLOADS:
                raise LoadError(f"the load expands to more than {MAX_WORKLOADS:,} workloads", here,
                                hint="shorten `for`, lower the rate or set `count`")
    return out, origins


def _expand(entry: Mapping[str, Any], rng: random.Random, where: Where) -> list[dict[str, Any]]:
    if "manifest" not in entry:
        raise LoadError("a stochastic entry needs a `manifest`", where,
                        hint="`ref` entries name one object; give the object as `manifest` to repeat it")
    start = _duration(entry.get("at", 0), where + ("at",))
    times = _arrival_times(entry, rng, start, where) if "arrivals" in entry else _copies(entry, start, where)
    try:
        run_for = Duration(entry["runFor"], "runFor") if entry.get("runFor") is not None else None
    except KueueplanError as e:
        raise LoadError(e.message, where + ("runFor",), e.hint) from None
    rest = {k: v for k, v in entry.items() if k not in ("arrivals", "for", "count", "every", "at", "runFor")}
    name = (entry["manifest"].get("metadata") or {}).get("name") if isinstance(entry["manifest"], Mapping) else None
    out = []
    for k, at in enumerate(times, start=1):
        plain = dict(rest, at=f"{at}ms")
        if run_for is not None:
            plain["runFor"] = f"{run_for.draw(rng)}ms"
        if name:
            plain["manifest"] = _renamed(entry["manifest"], f"{name}-{k}")
        out.append(plain)
    return out


def _copies(entry: Mapping[str, Any], start: int, where: Where) -> list[int]:
    """A fixed `count`/`every` entry whose run time alone is random."""
    count = _count(entry.get("count", 1), where + ("count",))
    every = _duration(entry.get("every", 0), where + ("every",))
    return [start + i * every for i in range(count)]


def _arrival_times(entry: Mapping[str, Any], rng: random.Random, start: int, where: Where) -> list[int]:
    spec = entry["arrivals"]
    here = where + ("arrivals",)
    if not isinstance(spec, Mapping) or len(spec) != 1:
        raise LoadError("arrivals needs exactly one of poisson, every, daily, bursts", here,
                        hint="e.g. arrivals: {poisson: 6/h}")
    if "every" in entry:
        raise LoadError("`every` spaces fixed copies; with `arrivals` the process sets the times", where + ("every",))
    window = _duration(entry["for"], where + ("for",)) if entry.get("for") is not None else None
    limit = _count(entry["count"], where + ("count",)) if entry.get("count") is not None else None
    if window is None and limit is None:
        raise LoadError("a stochastic entry needs `for` (a window), `count` (a number of arrivals) or both", where)
    end = start + window if window is not None else None
    cap = min(limit or MAX_WORKLOADS + 1, MAX_WORKLOADS + 1)
    [(kind, params)] = spec.items()
    try:
        gaps = _process(kind, params, rng)
    except KueueplanError as e:
        raise LoadError(e.message, here + (kind,), e.hint) from None
    times: list[int] = []
    t = float(start)
    for gap in gaps:
        t += gap
        at = round(t)
        if (end is not None and at >= end) or len(times) >= cap:
            break
        times.append(at)
    return times


def _process(kind: str, params: Any, rng: random.Random) -> Any:
    """An endless iterator of gaps (ms) between arrivals; the first gap is from the window's start."""
    if kind == "poisson":
        rate = parse_rate(params, "poisson")
        return iter(lambda: rng.expovariate(rate), None)
    if kind == "every":
        gap = parse_duration(params, "every")
        if gap <= 0:
            raise KueueplanError("every: the spacing must be positive")
        return _constant(gap)
    if kind == "daily":
        return _daily(params, rng)
    if kind == "bursts":
        return _bursts(params, rng)
    raise KueueplanError(f"unknown arrival process {kind!r}", hint="use poisson, every, daily or bursts")


def _constant(gap: int) -> Any:
    yield 0  # the first arrives at the window's start
    while True:
        yield gap


def _daily(params: Any, rng: random.Random) -> Any:
    """A Poisson process whose rate follows 24 hourly weights (by thinning at the peak rate)."""
    if not isinstance(params, Mapping) or "rate" not in params or "hours" not in params:
        raise KueueplanError("daily needs rate (the mean) and hours (24 relative weights, hour 0 first)")
    hours = params["hours"]
    if (not isinstance(hours, list) or len(hours) != 24
            or not all(isinstance(h, (int, float)) and not isinstance(h, bool) and h >= 0 for h in hours)
            or not any(hours)):
        raise KueueplanError("daily.hours must be 24 non-negative numbers, not all zero")
    mean = parse_rate(params["rate"], "daily.rate")
    scale = 24 / sum(hours)
    peak = mean * max(hours) * scale
    t = 0.0
    last = 0.0
    while True:
        t += rng.expovariate(peak)
        hour = int(t // 3_600_000) % 24
        if rng.random() * peak <= mean * hours[hour] * scale:
            yield t - last
            last = t


def _bursts(params: Any, rng: random.Random) -> Any:
    """Bursts arrive as a Poisson process; each brings `size` arrivals spread uniformly over `within`."""
    if not isinstance(params, Mapping) or not {"rate", "size"} <= set(params):
        raise KueueplanError("bursts needs rate (bursts per time) and size (arrivals per burst); within spreads them")
    rate = parse_rate(params["rate"], "bursts.rate")
    size = _count(params["size"], ("size",))
    within = parse_duration(params.get("within", 0), "bursts.within")
    t = 0.0
    last = 0.0
    while True:
        t += rng.expovariate(rate)
        for offset in sorted(rng.random() * within for _ in range(size)):
            yield t + offset - last
            last = t + offset


def _count(value: Any, where: Where) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LoadError("count must be a positive integer", where)
    return value


def _duration(value: Any, where: Where) -> int:
    try:
        return parse_duration(value, ".".join(str(p) for p in where[-1:]))
    except KueueplanError as e:
        raise LoadError(e.message, where, e.hint) from None


def _renamed(manifest: Mapping[str, Any], name: str) -> dict[str, Any]:
    out = dict(manifest)
    out["metadata"] = dict(manifest["metadata"], name=name)
    return out


# ----------------------------------------------------------------------------- kueue-bench WorkloadProfile


def profile_entries(profile: Mapping[str, Any], rng: random.Random, file: str) -> list[dict[str, Any]]:
    """Plain `workloads` entries for a kueue-bench.io/v1alpha1 WorkloadProfile (its own seed is not used:
    the run's seed decides, so Monte-Carlo samples differ and one seed reproduces all of them)."""
    spec = profile.get("spec")
    if not isinstance(spec, Mapping):
        raise KueueplanError("a WorkloadProfile needs a spec", file=file)
    name = str((profile.get("metadata") or {}).get("name") or "profile")
    try:
        window = parse_duration(spec.get("duration"), "spec.duration")
        pattern = spec.get("arrivalPattern") or {}
        rate = float(pattern.get("ratePerMinute") or 0)
        if rate <= 0 or pattern.get("type") not in ("constant", "poisson"):
            raise KueueplanError("spec.arrivalPattern needs type constant or poisson and ratePerMinute > 0")
        mix = spec.get("workloads")
        if not isinstance(mix, list) or not mix:
            raise KueueplanError("spec.workloads must be a non-empty list")
        weights = [float(w.get("weight") or 0) for w in mix]
        gaps = _constant(round(60_000 / rate)) if pattern["type"] == "constant" else \
            iter(lambda: rng.expovariate(rate / 60_000), None)
        out: list[dict[str, Any]] = []
        t = 0.0
        for gap in gaps:
            t += gap
            if round(t) >= window or len(out) >= MAX_WORKLOADS:
                break
            choice = mix[weighted_choice(rng, weights)]
            manifest, run_for = _profile_workload(choice, rng, f"{name}-{len(out) + 1}")
            out.append({"at": f"{round(t)}ms", "runFor": f"{run_for}ms", "manifest": manifest})
        return out
    except KueueplanError as e:
        e.file = e.file or file
        raise
    except (TypeError, ValueError, AttributeError) as e:
        raise KueueplanError(f"not a usable WorkloadProfile: {e}", file=file) from None


def _profile_workload(w: Mapping[str, Any], rng: random.Random, name: str) -> tuple[dict[str, Any], int]:
    kind = w.get("type")
    t = w.get("template") or {}
    labels = {QUEUE_LABEL: str(w["localQueue"])}
    if w.get("priorityClass"):
        labels["kueue.x-k8s.io/priority-class"] = str(w["priorityClass"])
    meta = {"name": name, "namespace": str(w.get("namespace") or "default"), "labels": labels}
    run_for = _draw_duration(t.get("duration"), rng)
    if kind == "Job":
        parallelism = _draw_int(t.get("parallelism", 1), rng)
        completions = _draw_int(t.get("completions", parallelism), rng)
        pod = _pod(_draw_requests(t.get("resources"), rng))
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
                "spec": {"parallelism": parallelism, "completions": completions, "template": pod}}, run_for
    if kind == "JobSet":
        # Kueue's JobSet integration: one pod set per replicated job, replicas x parallelism (1 here) pods
        # (pkg/controller/jobs/jobset/jobset_controller.go PodSets). A Workload object carries exactly that.
        pod_sets = [{"name": str(r["name"]), "count": _draw_int(r.get("replicas", 1), rng),
                     "template": _pod(_draw_requests(r.get("resources"), rng))}
                    for r in t.get("replicatedJobs") or []]
        if not pod_sets:
            raise KueueplanError(f"{name}: a JobSet template needs replicatedJobs")
        spec: dict[str, Any] = {"queueName": labels[QUEUE_LABEL], "podSets": pod_sets}
        if w.get("priorityClass"):
            spec["priorityClassName"] = str(w["priorityClass"])
            spec["priorityClassSource"] = "kueue.x-k8s.io/workloadpriorityclass"
        return {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload",
                "metadata": {"name": name, "namespace": meta["namespace"]}, "spec": spec}, run_for
    if kind == "RayJob":
        head = _pod(_draw_requests(t.get("headResources"), rng))
        groups = t.get("workerGroups") or [{"name": "workers", "replicas": t.get("workerReplicas", 1),
                                            "resources": t.get("workerResources")}]
        workers = []
        for g in groups:
            replicas = _draw_int(g.get("replicas", 1), rng)
            workers.append({"groupName": str(g.get("name") or "workers"), "replicas": replicas,
                            "minReplicas": replicas, "maxReplicas": replicas,
                            "template": _pod(_draw_requests(g.get("resources"), rng))})
        return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": meta,
                "spec": {"entrypoint": "python main.py", "shutdownAfterJobFinishes": True,
                         "rayClusterSpec": {"headGroupSpec": {"template": head}, "workerGroupSpecs": workers}}}, run_for
    raise KueueplanError(f"WorkloadProfile workload type {kind!r} is not supported", hint="use Job, JobSet or RayJob")


def _pod(requests: dict[str, str]) -> dict[str, Any]:
    return {"spec": {"restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox", "resources": {"requests": requests}}]}}


def _draw_requests(resources: Any, rng: random.Random) -> dict[str, str]:
    if not isinstance(resources, Mapping):
        return {}
    requests = resources.get("requests", resources)
    return {str(k): _draw_quantity(v, rng) for k, v in sorted(requests.items())}


def _draw_int(spec: Any, rng: random.Random) -> int:
    return max(1, int(parse_quantity(_draw_quantity(spec, rng))))


def _draw_duration(spec: Any, rng: random.Random) -> int:
    if spec is None:
        raise KueueplanError("every WorkloadProfile template needs a duration")
    return max(0, round(_draw(spec, rng, lambda v: float(parse_duration(v, "duration")))))


def _draw_quantity(spec: Any, rng: random.Random) -> str:
    value = _draw(spec, rng, lambda v: float(parse_quantity(v)))
    whole = _is_whole(spec)
    return str(round(value)) if whole else canonical(value if value >= 0 else 0)


def _is_whole(spec: Any) -> bool:
    """Integers stay integers (kueue-bench samples inclusive integers between integer bounds)."""
    values = [spec] if not isinstance(spec, Mapping) else \
        [spec.get(k) for k in ("min", "max", "mean") if spec.get(k) is not None] + list(spec.get("values") or [])
    return all(str(v).strip().lstrip("-").isdigit() for v in values)


def _draw(spec: Any, rng: random.Random, number: Any) -> float:
    """kueue-bench's Distribution: fixed, uniform, normal, lognormal (mean/stddev of the result), choice."""
    if not isinstance(spec, Mapping):
        return number(spec)
    kind = spec.get("distribution")
    if kind == "uniform":
        lo, hi = number(spec["min"]), number(spec["max"])
        return float(rng.randint(int(lo), int(hi))) if _is_whole(spec) else rng.uniform(lo, hi)
    if kind == "normal":
        return max(0.0, rng.gauss(number(spec["mean"]), number(spec["stddev"])))
    if kind == "lognormal":
        mean, sd = number(spec["mean"]), number(spec["stddev"])
        sigma2 = math.log(1 + (sd / mean) ** 2)
        return math.exp(rng.gauss(math.log(mean) - sigma2 / 2, math.sqrt(sigma2)))
    if kind == "choice":
        values = list(spec["values"])
        return number(values[weighted_choice(rng, [float(w) for w in spec.get("weights") or [1] * len(values)])])
    raise KueueplanError(f"unknown distribution {kind!r}", hint="use uniform, normal, lognormal or choice")


def read_profile(path: Path) -> Mapping[str, Any]:
    from kueueplan.kube import yamlio

    docs = [d for d in yamlio.load_file(path) if d.data is not None]
    if len(docs) != 1 or not isinstance(docs[0].data, Mapping) or docs[0].data.get("kind") != "WorkloadProfile":
        raise KueueplanError("expected one kueue-bench.io/v1alpha1 WorkloadProfile document", file=str(path))
    return docs[0].data
