"""One load replayed under another platform's queues: what `kueueplan diff BASE HEAD --load FILE` runs.

A load file is a recorded history (`kubectl get workloads.kueue.x-k8s.io -A -o yaml`, planning.history) or a
Scenario whose load (`workloads`, `historyFiles`, `workloadProfiles`) is taken without its manifests. It is
expanded into plain arrivals here, once, before any simulation (stochastic entries: one draw, seed 0), so
BASE and HEAD see the very same arrivals. `replayed(...)` then gives a side's scenario with that load in place
of its own: a spec environment keeps its manifests, Kueue configuration, admission-check models and its
queue-level expectations (per-workload ones name declared workloads the load does not hold); plain manifests
keep their cluster objects, and their workload objects are no longer the load.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from kueueplan.errors import KueueplanError
from kueueplan.kube.apiversion import KUEUEPLAN_API
from kueueplan.kube import yamlio
from kueueplan.kube.objects import list_items
from kueueplan.planning.history import history_entries, read_history
from kueueplan.planning.source import ScenarioSource
from kueueplan.simulate.scenario import is_scenario


@dataclass(frozen=True)
class Load:
    """Plain `workloads` entries in arrival order, warnings about them, and what they were read from."""

    entries: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    files: tuple[str, ...] = ()
    until: Any = None  # a Scenario load's own horizon (a duration as written); None: run until nothing changes

    @property
    def manifests(self) -> list[Mapping[str, Any]]:
        """The workload objects the entries replay (an entry may instead `ref` an object of the side)."""
        return [e["manifest"] for e in self.entries if isinstance(e.get("manifest"), Mapping)]

    @property
    def description(self) -> str:
        return f"{len(self.entries)} workload(s) from {', '.join(self.files)}"


def _has_workloads(data: Any) -> bool:
    items = list_items(data) if isinstance(data, Mapping) else None
    return any(isinstance(i, Mapping) and i.get("kind") == "Workload" for i in (items or [data]))


def read_load(paths: Iterable[Path]) -> Load:
    """Histories (all files are one history: times count from the earliest creation in any of them) and
    Scenario files (each its own load, appended in the order given)."""
    histories: list[Path] = []
    extra: list[dict[str, Any]] = []
    warnings: list[str] = []
    until = None
    files = []
    for path in paths:
        if not path.is_file():
            raise KueueplanError(f"--load {path}: no such file", hint="pass a `kubectl get workloads."
                                 "kueue.x-k8s.io -A -o yaml` export or a Scenario file")
        yamlio.refuse_linked_out(path)
        files.append(str(path))
        docs = [d for d in yamlio.load_file(path) if d.data is not None]
        if len(docs) == 1 and is_scenario(docs[0].data):
            source = ScenarioSource.load(path)
            entries, notes = source.load_entries()
            extra += entries
            warnings += notes
            until = (docs[0].data.get("spec") or {}).get("until", until)
        elif any(_has_workloads(d.data) for d in docs):
            histories.append(path)
        else:
            raise KueueplanError("holds neither Workload objects nor a Scenario", file=str(path),
                                 hint="export a history with kubectl get workloads.kueue.x-k8s.io -A -o yaml")
    history, notes = history_entries(read_history(histories)) if histories else ([], [])
    if not history and not extra:
        raise KueueplanError(f"--load {', '.join(files)}: no workloads to replay")
    return Load(history + extra, notes + warnings, tuple(files), until)


def replayed(source: ScenarioSource, load: Load) -> ScenarioSource:
    """`source` (a spec environment's scenario) running `load` instead of its own declared load."""
    data = copy.deepcopy(source.data)
    spec = data.setdefault("spec", {})
    for key in ("historyFiles", "workloadProfiles", "runs", "seed", "until"):
        spec.pop(key, None)  # its own load and horizon; one replay is one run (the load is already drawn)
    spec["workloads"] = copy.deepcopy(load.entries)
    if load.until is not None:
        spec["until"] = load.until
    expectations = spec.get("expectations") or []
    keep = [i for i, e in enumerate(expectations) if not (isinstance(e, Mapping) and "workload" in e)]
    if expectations:
        spec["expectations"] = [expectations[i] for i in keep]
    origins = [source.origins[i] for i in keep] if source.origins and len(source.origins) == len(expectations) \
        else None
    replaced = dataclasses.replace(source, data=data, origins=origins, load_warnings=list(load.warnings))
    replaced.probabilities = replaced._probabilities()
    return replaced


def manifests_replayed(objects: list[dict[str, Any]], name: str, load: Load) -> ScenarioSource:
    """Plain manifests' cluster objects (queues, flavors, Kueue's ConfigMap) running `load`."""
    from kueueplan.simulate.load import is_workload

    spec: dict[str, Any] = {"manifests": [copy.deepcopy(o) for o in objects if not is_workload(o)],
                            "workloads": copy.deepcopy(load.entries)}
    if load.until is not None:
        spec["until"] = load.until
    data = {"apiVersion": KUEUEPLAN_API, "kind": "Scenario", "metadata": {"name": name}, "spec": spec}
    source = ScenarioSource.of(data, name, None)
    source.load_warnings = list(load.warnings)
    return source
