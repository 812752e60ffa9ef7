"""A cluster's recorded history as load: `kubectl get workloads.kueue.x-k8s.io -A -o yaml` exports.

Each Workload is replayed as it happened (the contract's `historyFiles`): created at its creationTimestamp
minus the earliest one in all files, with its own pod sets, queue and priority; it runs from its last admission
(the PodsReady condition when present, else Admitted) to its Finished condition. One that had not finished
when exported never finishes; one never admitted gets the median run time of those that finished (else none)
and is named in the warnings. `fit` turns the same history into a stochastic load model.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Mapping

from kueueplan.errors import KueueplanError
from kueueplan.kube import yamlio
from kueueplan.kube.names import is_dns_label, is_dns_subdomain
from kueueplan.kube.objects import list_items
from kueueplan.report.escape import one_line
from kueueplan.simulate.scenario import MAX_DURATION_MS

_KEEP_SPEC = ("podSets", "queueName", "priority", "priorityClassName", "priorityClassSource", "priorityClassRef",
              "active", "maximumExecutionTimeSeconds")


@dataclass
class Recorded:
    namespace: str
    name: str
    created: int  # ms since the epoch
    admitted: int | None  # last admission (PodsReady, else Admitted), ms since the epoch
    finished: int | None
    manifest: dict[str, Any]
    file: str
    line: int

    @property
    def run_for(self) -> int | None:
        if self.admitted is None or self.finished is None:
            return None
        return max(0, self.finished - self.admitted)


def read_history(paths: list[Path]) -> list[Recorded]:
    out: list[Recorded] = []
    for path in paths:
        for doc in yamlio.load_file(path):
            if doc.data is None:
                continue
            items = list_items(doc.data)
            for i, item in enumerate(items if items is not None else [doc.data]):
                if isinstance(item, Mapping) and item.get("kind") == "Workload" \
                        and str(item.get("apiVersion", "")).startswith("kueue.x-k8s.io/"):
                    # kubectl exports one `kind: List`: name the item's own line (known from the one parse)
                    line = doc.line_of(("items", i)) if items is not None else doc.line
                    out.append(_recorded(item, str(path), line or doc.line))
    return out


def _mapping(wl: Mapping[str, Any], path: str, file: str, line: int) -> Mapping[str, Any]:
    """The mapping at a dotted `path` of a hand-edited export ({} when absent); any other shape is a located
    error, never a traceback."""
    value: Any = wl
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise KueueplanError(f"a Workload's {path} must be a mapping, not {type(value).__name__}", file=file,
                             line=line, hint="export with kubectl get workloads.kueue.x-k8s.io -A -o yaml")
    return value


def _recorded(wl: Mapping[str, Any], file: str, line: int) -> Recorded:
    meta = _mapping(wl, "metadata", file, line)
    name, ns = meta.get("name"), meta.get("namespace") or "default"
    if not name or not meta.get("creationTimestamp"):
        raise KueueplanError("a Workload in a history file needs metadata.name and metadata.creationTimestamp",
                             file=file, line=line, hint="export with kubectl get workloads.kueue.x-k8s.io -A -o yaml")
    # The API server only ever exported valid names; anything else is hand-made, and a name reaches reports
    # and CI logs (a newline there could start a workflow command).
    if not is_dns_subdomain(name) or not is_dns_label(ns):
        raise KueueplanError(f"Workload {one_line(ns)}/{one_line(name)} is not a valid Kubernetes name", file=file,
                             line=line, hint="a history is what kubectl exported: names are DNS subdomains, "
                                             "namespaces DNS labels")
    _mapping(wl, "status", file, line)
    conditions = {c.get("type"): c for c in _list(wl, "status.conditions", file, line) if isinstance(c, Mapping)}
    admitted = None
    for kind in ("PodsReady", "Admitted"):
        c = conditions.get(kind)
        if c is not None and c.get("status") == "True":
            admitted = _time(c.get("lastTransitionTime"), file, line)
            break
    finished = conditions.get("Finished")
    spec = {k: v for k, v in _mapping(wl, "spec", file, line).items() if k in _KEEP_SPEC}
    _list(wl, "spec.podSets", file, line)
    labels = {k: v for k, v in _mapping(wl, "metadata.labels", file, line).items()
              if str(k).startswith("kueue.x-k8s.io/")}
    manifest = {"apiVersion": wl.get("apiVersion"), "kind": "Workload",
                "metadata": {"name": str(name), "namespace": str(ns), **({"labels": labels} if labels else {})},
                "spec": spec}
    return Recorded(str(ns), str(name), _time(meta["creationTimestamp"], file, line), admitted,
                    _time(finished.get("lastTransitionTime"), file, line)
                    if finished is not None and finished.get("status") == "True" else None, manifest, file, line)


def _list(wl: Mapping[str, Any], path: str, file: str, line: int) -> list[Any]:
    parent, _, key = path.rpartition(".")
    value = _mapping(wl, parent, file, line).get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise KueueplanError(f"a Workload's {path} must be a list, not {type(value).__name__}", file=file,
                             line=line, hint="export with kubectl get workloads.kueue.x-k8s.io -A -o yaml")
    return value


def _time(value: Any, file: str, line: int) -> int:
    if value is None:
        raise KueueplanError("a Workload's creationTimestamp or True condition has no time", file=file, line=line,
                             hint="kubectl exports lastTransitionTime on every condition")
    try:
        stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise KueueplanError(f"{value!r} is not an RFC 3339 time", file=file, line=line) from None
    if stamp.tzinfo is None:
        raise KueueplanError(f"{value!r} has no time zone (Kubernetes writes UTC with Z)", file=file, line=line)
    return round(stamp.timestamp() * 1000)


def history_entries(records: list[Recorded]) -> tuple[list[dict[str, Any]], list[str]]:
    """Plain `workloads` entries, in creation order (ties: file order), and the warnings."""
    if not records:
        return [], []
    start = min(r.created for r in records)
    first = min(records, key=lambda r: r.created)
    for r in records:  # located here: the simulator would blame the spec folder the load is replayed on
        _within_a_century(r.created - start, f"created {_years(r.created - start)} after {first.namespace}/"
                          f"{first.name} ({first.file}:{first.line})", r)
        _within_a_century(r.run_for or 0, f"runs for {_years(r.run_for or 0)}", r)
    observed = [r.run_for for r in records if r.run_for is not None]
    default = round(statistics.median(observed)) if observed else None
    entries, warnings = [], []
    for r in sorted(records, key=lambda r: r.created):  # sorted() is stable: equal times keep file order
        entry: dict[str, Any] = {"at": f"{r.created - start}ms", "manifest": r.manifest}
        if r.run_for is not None:
            entry["runFor"] = f"{r.run_for}ms"
            if r.finished is not None and r.admitted is not None and r.finished < r.admitted:
                warnings.append(f"history: {r.namespace}/{r.name} ({r.file}:{r.line}) finished before its last "
                                "admission; it runs for 0s")
        elif r.admitted is None:
            if default is not None:
                entry["runFor"] = f"{default}ms"
            warnings.append(f"history: {r.namespace}/{r.name} ({r.file}:{r.line}) was never admitted; it runs for "
                            + (f"the median recorded run time, {default / 1000:g}s" if default is not None
                               else "ever (no finished workload to take a run time from)"))
        entries.append(entry)
    return entries, warnings


def _years(ms: int) -> str:
    return f"{ms / (365.25 * 24 * 3_600_000):.0f} years"


def _within_a_century(ms: int, what: str, r: Recorded) -> None:
    if ms > MAX_DURATION_MS:
        raise KueueplanError(f"Workload {r.namespace}/{r.name} {what}: a history spans at most a century",
                             file=r.file, line=r.line, hint="check its creationTimestamp and conditions' "
                             "lastTransitionTime (kubectl writes real times)")


def fit(records: list[Recorded]) -> list[dict[str, Any]]:
    """A stochastic load model: per queue and shape, Poisson arrivals at the observed rate over the observed
    window, and log-normal run times with the observed median and p95 (empirical samples below 5 runs)."""
    if not records:
        return []
    start, end = min(r.created for r in records), max(r.created for r in records)
    if end == start:  # one arrival (or all at once): no span between creations; the history runs on to its last record
        end = max([start] + [t for r in records for t in (r.admitted, r.finished) if t is not None])
    if end == start:
        r = min(records, key=lambda r: (r.created, r.namespace, r.name))
        raise KueueplanError(f"every Workload of the history was created at one instant and nothing was recorded "
                             f"after it (e.g. {one_line(r.namespace)}/{one_line(r.name)}): there is no arrival "
                             "rate to fit", file=r.file, line=r.line,
                             hint="export a history that spans some time (several Workloads, or admitted ones)")
    window = end - start
    groups: dict[tuple[str, str, str], list[Recorded]] = {}
    for r in records:
        shape = repr(r.manifest["spec"].get("podSets"))
        groups.setdefault((r.namespace, str(r.manifest["spec"].get("queueName")), shape), []).append(r)
    out = []
    for (ns, queue, _), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[1][0].name)):
        runs = sorted(r.run_for for r in rs if r.run_for is not None)
        entry: dict[str, Any] = {"arrivals": {"poisson": f"{len(rs) * 3_600_000 / window:.6g}/h"},
                                 "for": _readable(window)}
        if len(runs) >= 5:
            p95 = runs[min(len(runs) - 1, -(-len(runs) * 95 // 100) - 1)]
            median = statistics.median(runs)
            entry["runFor"] = {"median": _readable(round(median)), "p95": _readable(max(round(median), p95))}
        elif runs:
            entry["runFor"] = {"samples": [_readable(v) for v in runs]}
        template = rs[0].manifest
        entry["manifest"] = {**template, "metadata": {**template["metadata"], "name": f"{queue}-{rs[0].name}"}}
        out.append(entry)
    return out


def _readable(ms: int) -> str:
    """A duration a person pastes into a scenario ('1h20m0s', not '4800000ms'); exact to the millisecond."""
    from kueueplan.kube.configuration import format_go_duration

    return format_go_duration(ms / 1000)
