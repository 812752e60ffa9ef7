"""Loading and checking a Scenario file (../shared/docs/scenario-format.md).

`load_scenario(path)` / `scenario_from_dict(data, file, document)` -> `Scenario`. Every problem raises
KueueplanError naming the file and, where known, the line. `manifestFiles` are resolved relative to the
scenario file and must stay inside the repository (or, outside git, the scenario's folder).
Times are integer milliseconds internally.
"""

from __future__ import annotations

import math
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.kube import yamlio
from kueueplan.kube.apiversion import KUEUEPLAN_API
from kueueplan.kube.configuration import Configuration, configuration_from_configmap, parse_configuration
from kueueplan.kube.objects import read_object
from kueueplan.kube.podsets import MAX_WORKLOADS, SUPPORTED_KINDS, version_tuple, workload_count, workload_names
from kueueplan.kube.quantity import resource_value
from kueueplan.simulate import load
from kueueplan.simulate.heap import without_cycle_collector

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_UNIT_MS = {"h": 3_600_000, "m": 60_000, "s": 1000, "ms": 1, "us": 0.001, "µs": 0.001, "ns": 0.000001}
FAIR_SHARING_STRATEGIES = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
_ALLOWED_STRATEGIES = (["LessThanOrEqualToFinalShare"], ["LessThanInitialShare"],
                       ["LessThanOrEqualToFinalShare", "LessThanInitialShare"])


MAX_DURATION_MS = 100 * 365 * 24 * 3_600_000  # a century: anything longer is a typo, not a plan


def parse_duration(value: Any, what: str = "duration") -> int:
    """'90s', '10m', '1h30m', '100ms' or a number of seconds -> milliseconds (rounded to the nearest ms)."""
    if isinstance(value, bool):
        raise KueueplanError(f"{what}: {value!r} is not a duration")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise KueueplanError(f"{what}: {value!r} is not a finite duration")
        if value < 0:
            raise KueueplanError(f"{what}: a duration cannot be negative")
        if value * 1000 > MAX_DURATION_MS:
            raise KueueplanError(f"{what}: {value!r} seconds is longer than a century",
                                 hint="write e.g. 90s, 10m, 1h30m or 100ms")
        return round(value * 1000)
    if not isinstance(value, str):
        raise KueueplanError(f"{what}: {value!r} is not a duration", hint="write e.g. 90s, 10m, 1h30m or 100ms")
    text = value.strip()
    # Units first: a text they read whole ends with a unit, so it is never a number, and a scenario's thousands
    # of durations (90s, 100ms) skip float()'s exception.
    pos = 0
    total = 0.0
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_MS[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        try:
            num = float(text)
        except ValueError:
            raise KueueplanError(f"{what}: {value!r} is not a duration",
                                 hint="write e.g. 90s, 10m, 1h30m or 100ms") from None
        return parse_duration(num, what)
    if not math.isfinite(total) or total > MAX_DURATION_MS:
        raise KueueplanError(f"{what}: {value!r} is longer than a century", hint="write e.g. 90s, 10m, 1h30m or 100ms")
    return round(total)


NEVER = -1  # podsReadyAfter: never
_DOTTED = "field"  # parse_duration's `what` until a message needs the field's dotted path


@dataclass
class WorkloadTemplate:
    at: int
    run_for: int | None
    manifest: dict[str, Any]
    name: str
    line: int | None
    group: int | None = None  # copies of one `workloads` entry share it (pod sets are derived once)
    pods_ready_after: int = 0  # ms after admission; NEVER = the pods never become ready
    resubmit_after: int | None = None  # ms after a preemption (plain Pods): an outside controller recreates it
    file: str | None = None  # where the manifest is, when not in the scenario file (load from manifests)


@dataclass
class ScenarioEvent:
    at: int
    action: str  # finish | delete | apply
    target: dict[str, Any]
    line: int | None
    order: int = 0


@dataclass
class CheckModel:
    delay: int = 0
    capacity: dict[str, int] | None = None
    outcomes: tuple[str, ...] = ("Provisioned",)  # per provisioning attempt, the last repeats

    def outcome(self, attempt: int) -> str:
        return self.outcomes[min(attempt, len(self.outcomes)) - 1]


@dataclass
class Expectation:
    selector: dict[str, str]  # workload / namespace / localQueue / clusterQueue / kind
    admitted_within: int | None = None
    never_preempted: bool = False
    preempted: bool = False  # preempted at least once (what a tutorial shows)
    evicted: str | None = None  # evicted at least once with this reason (PodsReadyTimeout, ...; "Any": any)
    finished_by: int | None = None
    state: str | None = None
    line: int | None = None
    file: str | None = None  # where the expectation was written (a spec file for a spec's declared load)

    def where(self) -> str:
        """` (file:line)` for messages, or ''."""
        if self.line is None:
            return ""
        return f" ({self.file}:{self.line})" if self.file else f" (line {self.line})"

    def describe(self) -> str:
        if not self.selector:
            return "all workloads"
        return ", ".join(f"{k} {v}" for k, v in sorted(self.selector.items()))


@dataclass
class Scenario:
    name: str
    file: str
    manifests: list[tuple[dict[str, Any], str, int | None]]  # (data, file, line)
    workloads: list[WorkloadTemplate]
    events: list[ScenarioEvent]
    admission_checks: dict[str, CheckModel] = field(default_factory=dict)
    until: int | None = None
    kueue_version: tuple[int, int] = (0, 19)
    fair_sharing: dict[str, Any] | None = None
    expectations: list[Expectation] = field(default_factory=list)
    configuration: Configuration | None = None  # effective (release defaults applied)
    configuration_source: str = "default install"  # where it came from, for reports
    warnings: list[str] = field(default_factory=list)  # objects not understood (simulate/load.py)


def load_scenario(path: str | Path, until: Any = None) -> Scenario:
    docs = yamlio.load_file(path)
    docs = [d for d in docs if d.data is not None]
    if len(docs) != 1:
        raise KueueplanError(f"a Scenario file holds exactly one YAML document, found {len(docs)}", file=str(path))
    scenario = scenario_from_document(docs[0], Path(path))
    if until is not None:
        scenario.until = parse_duration(until, "--until")
    return scenario


@without_cycle_collector
def scenario_from_document(doc: yamlio.Document, path: Path | None) -> Scenario:
    return _Reader(doc, path).read()


@without_cycle_collector
def is_scenario(data: Any) -> bool:
    """A kueueplan Scenario document (its apiVersion may be left out)."""
    return isinstance(data, Mapping) and data.get("kind") == "Scenario" \
        and data.get("apiVersion") in (None, KUEUEPLAN_API)


def scenario_from_dict(data: Mapping[str, Any], file: str = "<scenario>", base: Path | None = None,
                       origins: list[tuple[str, int | None]] | None = None) -> Scenario:
    """Build a Scenario from an in-memory dict (e.g. `compile.scenario_for`); base resolves manifestFiles;
    `origins` are the file:line each expectation was written at (the dict itself has no lines)."""
    doc = yamlio.Document(data=data, file=file, index=0, line=1)
    scenario = _Reader(doc, base / "scenario.yaml" if base else None).read()
    if origins is not None and len(origins) == len(scenario.expectations):
        for exp, (where, line) in zip(scenario.expectations, origins):
            exp.file, exp.line = where, line
    else:
        for exp in scenario.expectations:  # an in-memory dict has no lines: "line 1" would be wrong
            exp.line = None
    return scenario


@without_cycle_collector
def scenario_from_manifests(objects: list[load.Obj], name: str, kueue_version: str | None = None) -> Scenario:
    """Plain manifests (kustomize/Helm output, a folder, stdin) as a scenario: the workloads in them are the load
    (simulate/load.py); a kueue-manager-config ConfigMap among them travels with the other manifests."""
    data: dict[str, Any] = {"apiVersion": KUEUEPLAN_API, "kind": "Scenario", "metadata": {"name": name},
                            "spec": {} if kueue_version is None else {"kueueVersion": kueue_version}}
    doc = yamlio.Document(data=data, file=name, index=0, line=None)
    return _Reader(doc, None, objects=objects).read()


class _Reader:
    def __init__(self, doc: Any, path: Path | None, objects: list[load.Obj] | None = None) -> None:
        self.doc = doc
        self.path = path
        self.file = str(path) if path is not None else getattr(doc, "file", "<scenario>")
        self.objects = objects  # plain manifests given instead of spec.manifests/manifestFiles

    def err(self, message: str, where: tuple = (), hint: str | None = None) -> KueueplanError:
        if isinstance(where, load.At):  # a load object of the manifests: name its file and line
            return KueueplanError(message, file=where.file, line=where.line, hint=hint)
        line = None
        try:
            line = self.doc.line_of(where) if where else self.doc.line
        except Exception:  # noqa: BLE001 - line lookup is best effort
            line = None
        return KueueplanError(message, file=self.file, line=line, hint=hint)

    def line(self, where: tuple) -> int | None:
        if isinstance(where, load.At):
            return where.line
        try:
            return self.doc.line_of(where)
        except Exception:  # noqa: BLE001
            return None

    def read(self) -> Scenario:
        data = self.doc.data
        if not isinstance(data, Mapping):
            raise self.err("a Scenario must be a mapping")
        if data.get("kind") != "Scenario":
            raise self.err(f"kind must be Scenario, got {data.get('kind')!r}", ("kind",),
                           hint=f"start the file with apiVersion: {KUEUEPLAN_API} and kind: Scenario")
        av = data.get("apiVersion")
        if av is not None and av != KUEUEPLAN_API:
            raise self.err(f"apiVersion must be {KUEUEPLAN_API}, got {av!r}", ("apiVersion",))
        meta = data.get("metadata") if isinstance(data.get("metadata"), Mapping) else {}
        spec = data.get("spec")
        if spec is None:
            raise self.err("spec is missing", hint="a Scenario has spec.workloads, spec.manifests or "
                                                   "spec.manifestFiles, and optionally spec.expectations")
        if not isinstance(spec, Mapping):
            raise self.err("spec must be a mapping", ("spec",))
        known = {"manifests", "manifestFiles", "workloads", "events", "admissionChecks", "until", "kueueVersion",
                 "fairSharing", "expectations", "configuration"}
        for key in spec:
            if key not in known:
                raise self.err(f"unknown field spec.{key}", ("spec", key),
                               hint=f"known fields: {', '.join(sorted(known))}")
        try:
            version = version_tuple(spec.get("kueueVersion"))
        except KueueplanError as e:
            raise self.err(e.message, ("spec", "kueueVersion"), e.hint) from None
        objects = self._manifests(spec)
        cluster, workload_objects = load.split(objects)
        scenario = Scenario(
            name=str(meta.get("name") or (self.path.stem if self.path else "scenario")),
            file=self.file,
            manifests=cluster,
            workloads=self._workloads(spec, workload_objects),
            events=self._events(spec),
            admission_checks=self._checks(spec),
            until=self._duration(spec.get("until"), ("spec", "until")) if spec.get("until") is not None else None,
            kueue_version=version,
            fair_sharing=self._fair_sharing(spec),
            expectations=self._expectations(spec),
            warnings=load.warnings_for(objects),
        )
        self._configuration(spec, scenario)
        if scenario.fair_sharing is None and scenario.configuration.fair_sharing is not None:
            scenario.fair_sharing = {"preemptionStrategies":
                                     list(scenario.configuration.fair_sharing.preemption_strategies or ())}
        return scenario

    def _configuration(self, spec: Mapping[str, Any], scenario: Scenario) -> None:
        """First match wins: spec.configuration, the kueue-manager-config ConfigMap among the manifests, the
        release's default install (second edition)."""
        release = scenario.kueue_version
        found: list[tuple[dict[str, Any], str, int | None]] = []
        for data, file, line in scenario.manifests:
            cfg = configuration_from_configmap(data, file, line)
            if cfg is not None:
                found.append((cfg, file, line))
        if len(found) > 1:
            places = ", ".join(f"{f}:{ln}" if ln else f for _, f, ln in found)
            raise KueueplanError(f"two kueue-manager-config ConfigMaps among the manifests ({places})",
                                 file=found[1][1], line=found[1][2],
                                 hint="Kueue reads one Configuration: keep one ConfigMap, or set spec.configuration")
        version = f"v{release[0]}.{release[1]}"
        if "configuration" in spec:
            data = spec.get("configuration") or {}
            if not isinstance(data, Mapping):
                raise self.err("spec.configuration must be a Kueue Configuration mapping", ("spec", "configuration"))
            try:
                scenario.configuration = parse_configuration(data, release, self.file,
                                                             self.line(("spec", "configuration")))
            except KueueplanError as e:
                e.file = e.file or self.file
                raise
            scenario.configuration_source = f"spec.configuration (Kueue {version}, omitted fields from its default " \
                                            "install)"
        elif found:
            data, file, line = found[0]
            scenario.configuration = parse_configuration(data, release, file, line)
            where = f"{Path(file).name}:{line}" if line else Path(file).name  # no absolute paths in reports
            scenario.configuration_source = f"ConfigMap kueue-manager-config at {where} (Kueue {version}, omitted " \
                                            "fields from its default install)"
        else:
            scenario.configuration = parse_configuration(None, release)
            scenario.configuration_source = f"default install of Kueue {version} (its shipped " \
                                            "controller_manager_config.yaml and defaults)"
        if "fairSharing" in spec:
            scenario.configuration_source += "; spec.fairSharing overrides its fairSharing"

    def _duration(self, value: Any, where: tuple) -> int:
        try:
            return parse_duration(value, _DOTTED)
        except KueueplanError:
            pass  # again with the field's name, made only for the message
        try:
            return parse_duration(value, ".".join(str(p) for p in where))
        except KueueplanError as e:
            raise self.err(e.message, where, e.hint) from None

    def _list(self, spec: Mapping[str, Any], key: str) -> list[Any]:
        value = spec.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.err(f"spec.{key} must be a list", ("spec", key))
        return value

    def _manifests(self, spec: Mapping[str, Any]) -> list[tuple[dict[str, Any], str, int | None]]:
        out: list[tuple[dict[str, Any], str, int | None]] = []
        if self.objects is not None:
            for data, file, line in self.objects:
                self._check_object(data, file, line)
            return list(self.objects)
        for i, m in enumerate(self._list(spec, "manifests")):
            where = ("spec", "manifests", i)
            if not isinstance(m, Mapping):
                raise self.err("each manifest must be a mapping", where)
            self._check_object(m, self.file, self.line(where))
            out.append((dict(m), self.file, self.line(where)))
        inline, out = out, []
        for i, f in enumerate(self._list(spec, "manifestFiles")):
            where = ("spec", "manifestFiles", i)
            for path in self._resolve(f, where):
                for d in yamlio.load_file(path):
                    if d.data is None:
                        continue
                    items = d.data.get("items") if isinstance(d.data, Mapping) and str(d.data.get("kind", "")).endswith("List") else None
                    for item in (items if isinstance(items, list) else [d.data]):
                        if not isinstance(item, Mapping):
                            raise KueueplanError("a manifest must be a mapping", file=str(path), line=d.line)
                        self._check_object(item, str(path), d.line)
                        out.append((dict(item), str(path), d.line))
        return load.ordered(inline, out)

    def _check_object(self, m: Mapping[str, Any], file: str, line: int | None) -> None:
        try:
            read_object(m, file, line)
        except KueueplanError as e:
            if e.file is None:
                e.file, e.line = file, line
            raise

    def _resolve(self, entry: Any, where: tuple) -> list[Path]:
        """A file or folder named by an entry, inside the repository; errors name the field the user wrote (the
        last name in `where`: manifestFiles, manifestFile, historyFiles, workloadProfiles)."""
        field = next((w for w in reversed(where) if isinstance(w, str)), "manifestFiles")
        if not isinstance(entry, str) or not entry:
            raise self.err(f"{field} entries must be non-empty strings", where)
        if Path(entry).is_absolute():
            raise self.err(f"{field} entry {entry!r} is absolute", where,
                           hint="write paths relative to the scenario file")
        base = (self.path.parent if self.path else Path.cwd()).resolve()
        root = _repo_root(base) or base
        target = (base / entry).resolve()
        if target != root and root not in target.parents:
            raise self.err(f"{field} entry {entry!r} leaves {root}", where,
                           hint="keep the files it names inside the repository that holds the scenario")
        try:
            is_dir, is_file = target.is_dir(), target.is_file()
        except OSError as e:  # e.g. a name longer than the file system allows
            raise self.err(f"{field} entry {entry[:80]!r} cannot be read: {e.strerror}", where) from None
        if is_dir:
            files = yamlio.yaml_files(target)  # as build, validate and diff walk folders (hidden ones skipped)
            for p in files:
                if root not in p.resolve().parents:
                    raise self.err(f"{p} (a link) leaves {root}", where)
            return files
        if not is_file:
            raise self.err(f"{field} entry {entry!r} does not exist ({target})", where)
        return [target]

    def _workloads(self, spec: Mapping[str, Any], objects: list[load.Obj] = ()) -> list[WorkloadTemplate]:
        out: list[WorkloadTemplate] = []
        keys: list[tuple[str, str, str]] = []  # each one's (kind, namespace, name), unique
        ordinal = 0
        for i, entry in enumerate(load.entries(self._list(spec, "workloads"), list(objects), self.err)):
            w, where = entry.data, entry.where
            if i == entry.first_given:
                ordinal = 0  # generateName ordinals count `workloads` entries alone, as in the first edition
            if not isinstance(w, Mapping):
                raise self.err("each workload must be a mapping", where)
            manifest = w.get("manifest")
            if not isinstance(manifest, Mapping):
                raise self.err("a workload needs a manifest (or a ref to an object of the manifests)",
                               where + ("manifest",))
            kind = manifest.get("kind")
            if kind not in SUPPORTED_KINDS:
                raise self.err(f"workload kind {kind!r} is not supported", where + ("manifest", "kind"),
                               hint=f"use one of {', '.join(SUPPORTED_KINDS)}")
            at = self._duration(w.get("at", 0), where + ("at",))
            run_for = None if w.get("runFor") is None else self._duration(w["runFor"], where + ("runFor",))
            count = w.get("count", 1)
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise self.err("count must be a positive integer", where + ("count",))
            try:
                per_object = workload_count(manifest)
            except (TypeError, ValueError):
                raise self.err("spec.replicas must be an integer", where + ("manifest", "spec", "replicas")) from None
            if len(out) + count * per_object > MAX_WORKLOADS:
                what = f"count {count}" if per_object == 1 else f"count {count} x {per_object:,} Workloads (replicas)"
                raise self.err(f"{what} brings the scenario above {MAX_WORKLOADS:,} workloads",
                               where + ("count",), hint="simulate a smaller sample of the load")
            every = self._duration(w.get("every", 0), where + ("every",))
            ready_after = 0
            if w.get("podsReadyAfter") is not None:
                ready_after = NEVER if w["podsReadyAfter"] == "never" else \
                    self._duration(w["podsReadyAfter"], where + ("podsReadyAfter",))
            resubmit = None
            if w.get("resubmitAfterPreemption") is not None:
                if kind != "Pod":
                    raise self.err("resubmitAfterPreemption applies to plain Pods only (Kueue deletes a preempted Pod; "
                                   "other kinds go back to their queue by themselves)",
                                   where + ("resubmitAfterPreemption",))
                resubmit = self._duration(w["resubmitAfterPreemption"], where + ("resubmitAfterPreemption",))
            meta = manifest.get("metadata")
            if not isinstance(meta, Mapping):
                raise self.err("the manifest needs metadata", where + ("manifest",))
            name, gen = meta.get("name"), meta.get("generateName")
            if not name and not gen:
                raise self.err("the manifest needs metadata.name or metadata.generateName", where + ("manifest", "metadata"))
            # One Workload per LeaderWorkerSet group / Deployment pod, named <object>-<index> (index from 0).
            # Copies differ only in metadata: they share one copy of the rest (nothing changes a manifest in
            # place; the job controller copies before renaming), which 50,000 deep copies made slow.
            base = _deep_copy(manifest)
            line, file = self.line(where), where.file if isinstance(where, load.At) else None  # every copy's
            # every copy's metadata, but for its name (set in the same order, so its keys are in the same order)
            base_md = dict(base["metadata"])
            base_md["name"] = None
            base_md.pop("generateName", None)
            base_md.setdefault("namespace", "default")
            namespace = str(base_md["namespace"])
            for c in range(1, count + 1):
                ordinal += 1
                m = dict(base)
                md = m["metadata"] = dict(base_md)
                if name:
                    md["name"] = f"{name}-{c}" if count > 1 else str(name)
                else:
                    md["name"] = f"{gen}{ordinal}"
                for wl_name in workload_names(m, md["name"]):
                    # every field positionally: a keyword argument cost 0.4 us more per copy
                    out.append(WorkloadTemplate(at + (c - 1) * every, run_for, m, wl_name, line, i, ready_after,
                                                resubmit, file))
                    keys.append((kind, namespace, wl_name))
        if len(set(keys)) < len(keys):
            _refuse_duplicate(out, keys, self.file)
        return out

    def _events(self, spec: Mapping[str, Any]) -> list[ScenarioEvent]:
        out = []
        for i, e in enumerate(self._list(spec, "events")):
            where = ("spec", "events", i)
            if not isinstance(e, Mapping):
                raise self.err("each event must be a mapping", where)
            actions = [a for a in ("apply", "delete", "finish") if a in e]
            if len(actions) != 1:
                raise self.err("an event needs exactly one of apply, delete, finish", where)
            action = actions[0]
            target = e[action]
            if not isinstance(target, Mapping):
                raise self.err(f"{action} must be a mapping", where + (action,))
            if action == "apply" and set(target) == {"manifestFile"}:
                at = self._duration(e.get("at", 0), where + ("at",))
                out += [ScenarioEvent(at, action, obj, line, i)
                        for obj, _file, line in self._apply_file(target["manifestFile"], where + (action, "manifestFile"))]
                continue
            if action == "apply":
                self._check_object(target, self.file, self.line(where + (action,)))
                if not isinstance(target.get("metadata"), Mapping) or not target["metadata"].get("name"):
                    raise self.err("apply needs an object with metadata.name", where + (action,))
            elif not target.get("name") or not target.get("kind"):
                raise self.err(f"{action} needs kind and name (and namespace for namespaced objects)", where + (action,))
            out.append(ScenarioEvent(self._duration(e.get("at", 0), where + ("at",)), action, dict(target),
                                     self.line(where), i))
        return out

    def _apply_file(self, entry: Any, where: tuple) -> list[load.Obj]:
        """`apply: {manifestFile: PATH}`: every object of a built file (e.g. another environment's gen/), so a
        scenario applies the build instead of a copy of it. Resolved as manifestFiles are."""
        out: list[load.Obj] = []
        for path in self._resolve(entry, where):
            for d in yamlio.load_file(path):
                items = d.data.get("items") if isinstance(d.data, Mapping) and str(d.data.get("kind", "")).endswith("List") else None
                for item in (items if isinstance(items, list) else [d.data]):
                    if not isinstance(item, Mapping):
                        raise KueueplanError("a manifest must be a mapping", file=str(path), line=d.line)
                    if load.is_workload(item):
                        raise KueueplanError(f"apply cannot create the {item.get('kind')} of {path}: workloads "
                                             "arrive through `workloads` (ref) or as load", file=str(path), line=d.line)
                    self._check_object(item, str(path), d.line)
                    if not isinstance(item.get("metadata"), Mapping) or not item["metadata"].get("name"):
                        raise KueueplanError("apply needs objects with metadata.name", file=str(path), line=d.line)
                    out.append((dict(item), str(path), d.line))
        return out

    def _checks(self, spec: Mapping[str, Any]) -> dict[str, CheckModel]:
        value = spec.get("admissionChecks")
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.err("spec.admissionChecks must map AdmissionCheck names to {delay, capacity}", ("spec", "admissionChecks"))
        out = {}
        for name, model in value.items():
            where = ("spec", "admissionChecks", name)
            model = model or {}
            if not isinstance(model, Mapping):
                raise self.err("an admission check model must be a mapping", where)
            capacity = None
            if model.get("capacity") is not None:
                if not isinstance(model["capacity"], Mapping):
                    raise self.err("capacity must map resource names to quantities", where + ("capacity",))
                try:
                    capacity = {str(r): resource_value(str(r), q) for r, q in model["capacity"].items()}
                except KueueplanError as e:
                    raise self.err(e.message, where + ("capacity",)) from None
            outcomes: tuple[str, ...] = ("Provisioned",)
            if model.get("outcomes") is not None:
                raw = model["outcomes"]
                if not isinstance(raw, list) or not raw or any(o not in ("Failed", "Provisioned") for o in raw):
                    raise self.err("outcomes must be a non-empty list of Failed / Provisioned", where + ("outcomes",),
                                   hint="the result of each provisioning attempt in order; the last repeats")
                outcomes = tuple(str(o) for o in raw)
            unknown = set(model) - {"delay", "capacity", "outcomes"}
            if unknown:
                raise self.err(f"unknown admission check model field(s): {', '.join(sorted(map(str, unknown)))}", where)
            out[str(name)] = CheckModel(self._duration(model.get("delay", 0), where + ("delay",)), capacity, outcomes)
        return out

    def _fair_sharing(self, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        if "fairSharing" not in spec:
            return None
        fs = spec.get("fairSharing") or {}
        if not isinstance(fs, Mapping):
            raise self.err("spec.fairSharing must be a mapping", ("spec", "fairSharing"))
        strategies = fs.get("preemptionStrategies") or list(FAIR_SHARING_STRATEGIES)
        if list(strategies) not in [list(s) for s in _ALLOWED_STRATEGIES]:
            raise self.err(f"preemptionStrategies {strategies!r} is not allowed", ("spec", "fairSharing"),
                           hint="use [LessThanOrEqualToFinalShare], [LessThanInitialShare] or both in that order")
        return {"preemptionStrategies": list(strategies)}

    def _expectations(self, spec: Mapping[str, Any]) -> list[Expectation]:
        out = []
        for i, e in enumerate(self._list(spec, "expectations")):
            where = ("spec", "expectations", i)
            if not isinstance(e, Mapping):
                raise self.err("each expectation must be a mapping", where)
            selector = {k: str(e[k]) for k in ("workload", "namespace", "team", "localQueue", "clusterQueue", "kind")
                        if e.get(k) is not None}
            if "team" in selector:
                selector["namespace"] = selector.pop("team")
            exp = Expectation(selector, line=self.line(where), file=self.file)
            if e.get("admittedWithin") is not None:
                exp.admitted_within = self._duration(e["admittedWithin"], where + ("admittedWithin",))
            if e.get("finishedBy") is not None:
                exp.finished_by = self._duration(e["finishedBy"], where + ("finishedBy",))
            exp.never_preempted = bool(e.get("neverPreempted", False))
            exp.preempted = bool(e.get("preempted", False))
            if e.get("evicted") is not None:
                if not isinstance(e["evicted"], str):
                    raise self.err("evicted names an eviction reason (e.g. PodsReadyTimeout) or Any",
                                   where + ("evicted",))
                exp.evicted = e["evicted"]
            if e.get("state") is not None:
                states = ("Pending", "Inadmissible", "QuotaReserved", "Admitted", "Finished", "Deactivated")
                if e["state"] not in states:
                    raise self.err(f"state must be one of {', '.join(states)}", where + ("state",))
                exp.state = str(e["state"])
            unknown = set(e) - {"workload", "namespace", "team", "localQueue", "clusterQueue", "kind",
                                "admittedWithin", "finishedBy", "neverPreempted", "preempted", "evicted", "state"}
            if unknown:
                raise self.err(f"unknown expectation field(s): {', '.join(sorted(unknown))}", where)
            out.append(exp)
        return out


def _refuse_duplicate(out: list[WorkloadTemplate], keys: list[tuple[str, str, str]], file: str) -> None:
    """Raise for the first workload named as an earlier one (same kind and namespace)."""
    seen: set[tuple[str, str, str]] = set()
    for t, key in zip(out, keys):
        if key in seen:
            raise KueueplanError(f"two workloads are named {key[0]} {key[1]}/{key[2]}", file=t.file or file,
                                 line=t.line, hint="names must be unique per kind and namespace (count appends -1..-N)")
        seen.add(key)


def _deep_copy(value: Any) -> Any:
    if isinstance(value, (str, int, float)) or value is None:  # most leaves: skip the slower ABC check
        return value
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    if isinstance(value, (dict, Mapping)):  # dict first: YAML's mappings, without the slower ABC check
        return {k: _deep_copy(v) for k, v in value.items()}
    return value


def _repo_root(start: Path) -> Path | None:
    for p in (start, *start.parents):
        if (p / ".git").exists():
            return p.resolve()
    try:
        out = subprocess.run(["git", "-C", str(start), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out.stdout.strip()).resolve() if out.returncode == 0 and out.stdout.strip() else None
