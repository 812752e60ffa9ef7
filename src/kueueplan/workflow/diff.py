"""What a change does: quotas, objects and (for specs with declared load) the simulated outcome, per environment.

`diff_sides(base, head, simulate=...)` compares two `Side`s. The simulation is injected as a function
(environment's Side -> `SimRun` or None) so this module stays pure and testable without the simulator.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from kueueplan.kube.objects import Cluster, read_cluster
from kueueplan.workflow.manifests import Key, changed_paths, index
from kueueplan.workflow.quotas import QuotaChange, diff_quotas, quota_table
from kueueplan.workflow.sources import Side

ADMITTED_STATES = ("QuotaReserved", "Admitted", "Finished")


@dataclass
class SimRun:
    """One simulation: the JSON result of `kueueplan simulate` and the expectations it broke."""

    result: Mapping[str, Any]
    failed_expectations: list[str] = field(default_factory=list)
    expectations: int = 0  # how many were declared
    failed: int = 0  # how many of them failed (failed_expectations has a line per workload that broke one)
    failure_keys: list[str] = field(default_factory=list)  # failed_expectations without file:line (lines move)
    failure_owners: list[int] = field(default_factory=list)  # which declared expectation each line breaks
    requests: dict[str, str] = field(default_factory=dict)  # workload -> its total request, in words
    runs: int = 1  # Monte-Carlo runs the expectations were judged on (`result` is run 0)


@dataclass(frozen=True)
class ObjectChange:
    key: Key
    change: str  # added, removed, changed
    paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorkloadDelta:
    workload: str  # namespace/name
    cluster_queue: str
    change: str  # inadmissible, not-admitted, preempted, slower, faster, admitted
    before: str
    after: str
    message: str = ""
    blocking: bool = False  # makes `diff` exit 1


@dataclass(frozen=True)
class TeamDelta:
    """One team's replayed load on both sides (`diff --load`): waits in seconds over the workloads admitted on
    that side; `never_admitted`: admitted on BASE, not on HEAD; `most_delayed`: (workload, seconds later)."""

    team: str
    cluster_queues: tuple[str, ...]
    workloads: int
    admitted: tuple[int, int]
    never_admitted: int
    preempted: tuple[int, int]
    p95_wait: tuple[float | None, float | None]
    mean_wait: tuple[float | None, float | None]
    most_delayed: tuple[str, float] | None = None

    @property
    def changed(self) -> bool:
        return (self.admitted[0] != self.admitted[1] or self.preempted[0] != self.preempted[1]
                or self.p95_wait[0] != self.p95_wait[1] or self.mean_wait[0] != self.mean_wait[1])


@dataclass
class EnvDiff:
    env: str
    quotas: list[QuotaChange] = field(default_factory=list)
    objects: list[ObjectChange] = field(default_factory=list)
    workloads: list[WorkloadDelta] = field(default_factory=list)
    broken_expectations: list[str] = field(default_factory=list)  # one line per workload that breaks one
    broken_count: int = 0  # how many declared expectations those lines break
    simulated: bool = False
    head_cluster: Cluster = field(default_factory=Cluster)
    status: str = "changed"  # changed, added (env only in head), removed (only in base)
    apply: list[Any] = field(default_factory=list)  # kueueplan.workflow.applyplan.ApplyStep
    teams: list[TeamDelta] = field(default_factory=list)  # per team, with `diff --load`

    @property
    def empty(self) -> bool:
        return not (self.quotas or self.objects or self.workloads or self.broken_expectations or self.apply)


@dataclass
class DiffReport:
    base: str
    head: str
    envs: list[EnvDiff]
    load: str | None = None  # `diff --load`: what was replayed on both sides
    load_warnings: list[str] = field(default_factory=list)  # about that load (never admitted, ...), once

    @property
    def blocking(self) -> list[str]:
        """Reasons to fail the pull request: declared workloads made inadmissible, expectations broken."""
        out = []
        for env in self.envs:
            out += [f"{env.env}: {w.workload} {w.change} in ClusterQueue {w.cluster_queue}"
                    for w in env.workloads if w.blocking]
            out += [f"{env.env}: {text}" for text in env.broken_expectations]
            out += [f"{env.env}: {step.text}" for step in env.apply if step.blocking]
        return out

    @property
    def exit_code(self) -> int:
        return 1 if self.blocking else 0


Simulator = Callable[[Side, str], "SimRun | None"]


def diff_objects(base: Mapping[Key, Any], head: Mapping[Key, Any]) -> list[ObjectChange]:
    out = []
    for key in sorted(set(base) | set(head)):
        if key not in head:
            out.append(ObjectChange(key, "removed"))
        elif key not in base:
            out.append(ObjectChange(key, "added"))
        elif base[key] != head[key]:
            out.append(ObjectChange(key, "changed", tuple(changed_paths(base[key], head[key]))))
    return out


def diff_sides(base: Side, head: Side, simulate: Simulator | None = None,
               allow: Callable[[str], set[str]] | None = None, per_team: bool = False,
               load: Sequence[Mapping[str, Any]] = ()) -> DiffReport:
    """`allow(env)`: the apply steps the PlatformPolicy permits there (workflow/applyplan.py; default none).
    `per_team`: also summarise the simulated outcome per team (`diff --load`: one load on both sides).
    `load`: the workload objects `simulate` replays instead of the sides' own (`diff --load`), so the apply plan
    can read what the replayed workloads request."""
    if len(base.envs) == 1 and len(head.envs) == 1 and set(base.envs) != set(head.envs):
        # Two single-environment sides (e.g. two manifest folders): compare them whatever their names.
        base = Side(base.path, base.is_spec, {next(iter(head.envs)): next(iter(base.envs.values()))})
    envs = []
    warnings: list[str] = []
    for env in sorted(set(base.envs) | set(head.envs)):
        base_docs = base.envs.get(env, [])
        head_docs = head.envs.get(env, [])
        status = "added" if env not in base.envs else "removed" if env not in head.envs else "changed"
        base_cluster, head_cluster = read_cluster(base_docs), read_cluster(head_docs)
        teams = {**(base.teams(env) if env in base.envs else {}), **(head.teams(env) if env in head.envs else {})}
        result = EnvDiff(env, diff_quotas(quota_table(base_cluster), quota_table(head_cluster), teams),
                         diff_objects(index(base_docs), index(head_docs)), head_cluster=head_cluster, status=status)
        before = None
        if simulate is not None and status == "changed":
            # a spec's declared load, or the workload objects of plain manifests (their load, second edition)
            before = simulate(base, env)
            after = simulate(head, env)
            if after is not None:
                result.simulated = True
                result.workloads = workload_deltas(before.result if before else None, after.result, after.requests)
                if per_team and before is not None:
                    result.teams = team_deltas(before.result, after.result, teams)
                    warnings += _unqueued_warning(env, before.result, after.result)
                # compared without their file:line, so an edit that only moves lines breaks nothing
                already = set(before.failure_keys or before.failed_expectations) if before else set()
                keys = after.failure_keys or after.failed_expectations
                owners = after.failure_owners or list(range(len(keys)))
                broken = [(f, owner) for f, key, owner in zip(after.failed_expectations, keys, owners)
                          if key not in already]
                result.broken_expectations = [f for f, _ in broken]
                result.broken_count = len({owner for _, owner in broken})
        if status == "changed":
            from kueueplan.workflow.applyplan import plan_env

            result.apply = plan_env(env, base_docs, head_docs, before.result if before else None,
                                    allow(env) if allow else (), load)
        envs.append(result)
    return DiffReport(str(base.path), str(head.path), envs, load_warnings=warnings)


def _unqueued_warning(env: str, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """A replayed workload whose LocalQueue exists on neither side never runs on either, so the comparison says
    nothing about it: a history recorded on another platform (other namespaces or queue names) looks unchanged."""
    old = _by_name(before)
    lost = [(name, w) for name, w in _by_name(after).items()
            if not w.get("clusterQueue") and not (old.get(name) or {}).get("clusterQueue")]
    if not lost:
        return []
    name, w = lost[0]
    why = f": {w.get('message')}" if w.get("message") else ""
    return [f"{env}: {len(lost)} replayed workload(s) reach no ClusterQueue on BASE or HEAD and never run on "
            f"either (e.g. {name}{why}); was the load recorded on this platform? Its namespaces and LocalQueues "
            "must exist here"]


# --------------------------------------------------------------------------- simulation delta


def _by_name(result: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    if not result:
        return {}
    return {str(w.get("name")): w for w in result.get("workloads", []) if isinstance(w, Mapping)}


def _wait(w: Mapping[str, Any]) -> float | None:
    if w.get("admittedAt") is None or w.get("createdAt") is None:
        return None
    return float(w["admittedAt"]) - float(w["createdAt"])


def _preemptions(result: Mapping[str, Any] | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for event in (result or {}).get("events", []):
        if isinstance(event, Mapping) and event.get("type") == "Preempted":
            out[str(event.get("workload"))] = out.get(str(event.get("workload")), 0) + 1
    return out


def family(name: str) -> str:
    """The declared workload a copy belongs to: `ns/train-3` -> `ns/train` (count expansion adds `-N`)."""
    return re.sub(r"-\d+$", "", name)


def p95(values: list[float]) -> float:
    """Nearest-rank 95th percentile (a value that occurred, so reports never show an interpolated wait)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def seconds_text(value: float | None) -> str:
    if value is None:
        return "never"
    value = float(value)
    if value < 60:
        return f"{value:g}s"
    minutes, seconds = divmod(int(round(value)), 60)
    hours, minutes = divmod(minutes, 60)
    return (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{seconds}s" if seconds else "")


def _state_text(w: Mapping[str, Any] | None) -> str:
    if w is None:
        return "not declared"
    wait = _wait(w)
    return f"{w.get('state')}" + (f" (waited {seconds_text(wait)})" if wait is not None else "")


def workload_deltas(before: Mapping[str, Any] | None, after: Mapping[str, Any],
                    requests: Mapping[str, str] | None = None) -> list[WorkloadDelta]:
    """Workloads that become inadmissible or are never admitted, get preempted more, or whose p95 wait moves.
    A blocking one says what it requests (`requests`), beside the quota change the report shows."""
    requests = requests or {}
    old, new = _by_name(before), _by_name(after)
    old_pre, new_pre = _preemptions(before), _preemptions(after)
    out: list[WorkloadDelta] = []
    for name, w in new.items():
        prev = old.get(name)
        cq = str(w.get("clusterQueue") or (prev or {}).get("clusterQueue") or "-")
        was_ok = prev is None or prev.get("state") in ADMITTED_STATES
        if w.get("state") == "Inadmissible" and (prev is None or prev.get("state") != "Inadmissible"):
            # A new object with no queue name (a migration Job beside the queued ones) is not Kueue's: shown,
            # but it does not fail the pull request.
            queued = prev is not None or bool(w.get("localQueue"))
            out.append(WorkloadDelta(name, cq, "inadmissible", _state_text(prev), "Inadmissible",
                                     _with_request(str(w.get("message") or ""), requests.get(name)) if queued
                                     else str(w.get("message") or ""), blocking=queued))
        elif w.get("state") not in ADMITTED_STATES and prev is not None and was_ok:
            out.append(WorkloadDelta(name, cq, "never admitted", _state_text(prev), _state_text(w),
                                     _with_request(str(w.get("message") or ""), requests.get(name)), blocking=True))
        elif new_pre.get(name, 0) > old_pre.get(name, 0):
            out.append(WorkloadDelta(name, cq, "preempted", f"preempted {old_pre.get(name, 0)}x",
                                     f"preempted {new_pre.get(name, 0)}x"))
    out.extend(_wait_deltas(old, new, {d.workload for d in out}))
    return sorted(out, key=lambda d: (not d.blocking, d.workload))


def _with_request(message: str, request: str | None) -> str:
    if not request:
        return message
    return f"{message}; it requests {request}" if message else f"it requests {request}"


def _wait_deltas(old: dict[str, Mapping[str, Any]], new: dict[str, Mapping[str, Any]],
                 reported: set[str]) -> list[WorkloadDelta]:
    """p95 wait per declared workload (its copies together), where both sides admitted some."""
    groups: dict[str, tuple[list[float], list[float], str]] = {}
    for name, w in new.items():
        if name in reported or name not in old:
            continue
        before, after = _wait(old[name]), _wait(w)
        if before is None or after is None:
            continue
        b, a, _cq = groups.setdefault(family(name), ([], [], str(w.get("clusterQueue") or "-")))
        b.append(before)
        a.append(after)
    out = []
    for fam, (b, a, cq) in sorted(groups.items()):
        before, after = p95(b), p95(a)
        if before == after:
            continue
        change = "waits longer" if after > before else "waits less"
        if len(b) == 1:  # one workload (a replayed history's are each their own): by how much
            sign = "+" if after > before else "-"
            out.append(WorkloadDelta(fam, cq, change, f"waited {seconds_text(before)}",
                                     f"waits {seconds_text(after)} ({sign}{seconds_text(abs(after - before))})"))
        else:
            out.append(WorkloadDelta(fam, cq, change, f"p95 wait {seconds_text(before)}",
                                     f"p95 wait {seconds_text(after)}"))
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def team_deltas(before: Mapping[str, Any], after: Mapping[str, Any], teams: Mapping[str, str]) -> list[TeamDelta]:
    """Per team (its ClusterQueues; a queue of no team stands for itself), the same load on BASE and HEAD:
    admitted, preempted, p95 and mean wait, and the workload admitted latest compared with BASE."""
    old, new = _by_name(before), _by_name(after)
    old_pre, new_pre = _preemptions(before), _preemptions(after)
    groups: dict[str, list[str]] = {}
    queues: dict[str, set[str]] = {}
    for name in dict.fromkeys([*old, *new]):
        w = new.get(name) or old[name]
        cq = str(w.get("clusterQueue") or (old.get(name) or {}).get("clusterQueue") or "-")
        team = teams.get(cq, cq)
        groups.setdefault(team, []).append(name)
        queues.setdefault(team, set()).add(cq)
    out = []
    for team, names in sorted(groups.items()):
        waits: tuple[list[float], list[float]] = ([], [])
        delays: list[tuple[float, str]] = []
        lost = 0
        for name in names:
            b, a = old.get(name), new.get(name)
            wb, wa = (_wait(b) if b else None), (_wait(a) if a else None)
            if wb is not None:
                waits[0].append(wb)
            if wa is not None:
                waits[1].append(wa)
            if wb is not None and wa is None:
                lost += 1
            elif wb is not None and wa is not None and wa > wb:
                delays.append((wa - wb, name))
        worst = max(delays, key=lambda d: (d[0], d[1])) if delays else None
        out.append(TeamDelta(
            team, tuple(sorted(queues[team])), len(names), (len(waits[0]), len(waits[1])), lost,
            (sum(old_pre.get(n, 0) for n in names), sum(new_pre.get(n, 0) for n in names)),
            (p95(waits[0]) if waits[0] else None, p95(waits[1]) if waits[1] else None),
            (_mean(waits[0]), _mean(waits[1])), (worst[1], worst[0]) if worst else None))
    return out
