"""A scenario that can be sampled: the raw Scenario document, expanded per (seed, run) before it is read.

`ScenarioSource.load(path, env)` takes a Scenario file or a spec folder (with --env). `sample(seed, run)`
expands stochastic entries and WorkloadProfiles with that run's generator and returns the ordinary
`simulate.scenario.Scenario`; errors name the file and the line of the entry they came from. A source is
plain data (picklable), so executors ship it to other processes or Ray workers as it is.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.kube import yamlio
from kueueplan.planning.load import LoadError, expand_entries, profile_entries, read_profile
from kueueplan.planning.sampling import run_rng
from kueueplan.simulate.scenario import Scenario, scenario_from_document

Where = tuple[str | int, ...]


@dataclass
class ScenarioSource:
    data: dict[str, Any]
    file: str
    path: Path | None  # resolves manifestFiles and workloadProfiles; None for an in-memory scenario
    lines: Any = None  # the original yamlio.Document, for error lines (None: the document's first line)
    probabilities: dict[int, float] = field(default_factory=dict)  # expectation index -> required probability
    origins: list[tuple[str, int | None]] | None = None  # file:line of each expectation of a compiled spec
    env: str | None = None  # the spec environment it was compiled from
    _replayed: Any = field(default=None, repr=False, compare=False)
    _fixed: Any = field(default=None, repr=False, compare=False)  # a ready Scenario (plain manifests' load)
    until: int | None = None  # ms: overrides the scenario's own horizon in every run (--until)
    load_warnings: list[str] = field(default_factory=list)  # about a load given from outside (diff --load)

    @classmethod
    def load(cls, path: Path, env: str | None = None, raw: list[Any] | None = None) -> "ScenarioSource":
        """A Scenario file or a spec folder's environment; `raw`: the file's documents, if already read."""
        if path.is_dir():
            from kueueplan.compile import scenario_for

            if env is None:
                from kueueplan.spec.load import load_spec

                names = [e.name for e in load_spec(path).environments()]
                if len(names) != 1:  # the only environment needs no choosing (as graph, check and diff do)
                    raise KueueplanError(f"a spec folder with several environments needs --env; its environments "
                                         f"are {', '.join(names)}", file=str(path),
                                         hint=f"e.g. kueueplan simulate {path} --env {names[0]}")
                env = names[0]
            origins: list[tuple[str, int | None]] = []
            source = cls.of(scenario_for(path, env, origins), f"{path}/ (env {env})", path / "scenario.yaml")
            source.origins, source.env = origins, env
            return source
        if not path.is_file():
            raise KueueplanError(f"{path} does not exist", hint="pass a Scenario file or a spec folder with --env")
        yamlio.refuse_linked_out(path)
        docs = [d for d in (yamlio.load_file(path) if raw is None else raw) if d.data is not None]
        if len(docs) != 1:
            raise KueueplanError(f"a Scenario file holds exactly one YAML document, found {len(docs)}", file=str(path))
        return cls.of(docs[0].data, str(path), path, docs[0])

    @classmethod
    def of(cls, data: Any, file: str, path: Path | None, lines: Any = None) -> "ScenarioSource":
        source = cls(data, file, path, lines)
        source.probabilities = source._probabilities()
        return source

    @classmethod
    def fixed(cls, scenario: Scenario) -> "ScenarioSource":
        """Plain manifests: their load is fixed (annotations, not processes); every run is the same."""
        source = cls({"spec": {}}, scenario.file, None)
        source._fixed = scenario
        return source

    # --------------------------------------------------------------------------- sampling

    def sample(self, seed: int = 0, run: int = 0) -> Scenario:
        """The plain scenario of run `run` under `seed` (run 0 of seed 0 is what a single `simulate` runs)."""
        scenario = copy.deepcopy(self._fixed) if self._fixed is not None else self._read(seed, run)
        if self.until is not None:
            scenario.until = self.until
        return scenario

    def _read(self, seed: int, run: int) -> Scenario:
        rng = run_rng(seed, run)
        data = self.data
        spec = data.get("spec") if isinstance(data, Mapping) else None
        origins: list[Where] = []
        warnings: list[str] = []
        if isinstance(spec, Mapping):
            spec = dict(spec)
            spec.pop("runs", None)  # a spec environment's Monte-Carlo settings (see `monte_carlo_settings`)
            spec.pop("seed", None)
            given = isinstance(spec.get("workloads"), list) and bool(spec["workloads"])
            plain, origins, warnings = self._expand(spec, rng)
            if given or plain:
                spec["workloads"] = plain
            if isinstance(spec.get("expectations"), list):
                spec["expectations"] = [{k: v for k, v in e.items() if k != "probability"} if isinstance(e, Mapping)
                                        else e for e in spec["expectations"]]
            data = dict(data, spec=spec)
        doc = _MappedDocument(data, self.file, self.lines, origins)
        scenario = scenario_from_document(doc, self.path)
        scenario.warnings[:0] = self.load_warnings + warnings
        if self.env is not None and "configuration" in spec:
            # named after the Environment, not a path: reports must not depend on where the spec folder is
            major, minor = scenario.kueue_version
            scenario.configuration_source = (f"configuration of Environment {self.env} (Kueue v{major}.{minor}, "
                                             "over the release's shipped controller_manager_config.yaml)")
        if self.lines is None:  # an in-memory scenario (a compiled spec) has no lines of its own
            origins = self.origins if self.origins and len(self.origins) == len(scenario.expectations) else None
            for i, exp in enumerate(scenario.expectations):
                exp.file, exp.line = origins[i] if origins else (exp.file, None)
        return scenario

    def _expand(self, spec: dict[str, Any], rng: Any) -> tuple[list[dict[str, Any]], list[Where], list[str]]:
        """The plain arrivals of `spec`'s load (`workloads`, `historyFiles`, `workloadProfiles`; the last two are
        popped from `spec`), where each came from, and the history's warnings."""
        entries = spec.get("workloads") if isinstance(spec.get("workloads"), list) else []
        try:
            plain, origins = expand_entries(entries, rng, ("spec", "workloads"))
        except LoadError as e:
            raise KueueplanError(e.message, file=self.file, line=self._line(e.where), hint=e.hint) from None
        history, warnings = self._history(spec.pop("historyFiles", None))
        plain[:0] = history
        origins[:0] = [("spec", "historyFiles")] * len(history)
        for i, name in enumerate(spec.pop("workloadProfiles", None) or []):
            profile = read_profile(self._resolve(name, ("spec", "workloadProfiles", i)))
            extra = profile_entries(profile, rng, name)
            plain += extra
            origins += [("spec", "workloadProfiles", i)] * len(extra)
        return plain, origins, list(warnings)

    def load_entries(self, seed: int = 0, run: int = 0) -> tuple[list[dict[str, Any]], list[str]]:
        """Run `run`'s plain arrivals under `seed` and the history's warnings: this scenario's load, to replay
        under other queues (planning.replay)."""
        spec = dict(self.data.get("spec") or {}) if isinstance(self.data, Mapping) else {}
        plain, _, warnings = self._expand(spec, run_rng(seed, run))
        return plain, warnings

    def monte_carlo_settings(self) -> tuple[int, int]:
        """(runs, seed) that a spec environment declares for `check` and `diff` (default: one run, seed 0)."""
        spec = self.data.get("spec") if isinstance(self.data, Mapping) else None
        return int((spec or {}).get("runs", 1)), int((spec or {}).get("seed", 0))

    def _history(self, files: Any) -> tuple[list[dict[str, Any]], list[str]]:
        """historyFiles as plain entries (read once per source: they do not depend on the seed)."""
        if not files:
            return [], []
        if self._replayed is None:
            from kueueplan.planning.history import history_entries, read_history

            if not isinstance(files, list):
                raise KueueplanError("spec.historyFiles must be a list of files", file=self.file,
                                     line=self._line(("spec", "historyFiles")))
            paths = [p for i, f in enumerate(files) for p in self._resolve(f, ("spec", "historyFiles", i), many=True)]
            self._replayed = history_entries(read_history(paths))
        return self._replayed

    def with_quota(self, cluster_queue: str, flavor: str, resource: str, value: str) -> "ScenarioSource":
        """A copy whose ClusterQueue gives `flavor` `value` of `resource` as nominal quota."""
        if self._fixed is not None:
            scenario = copy.deepcopy(self._fixed)
            found = _set_quota([m for m, _, _ in scenario.manifests], cluster_queue, flavor, resource, value)
            copied = dataclasses.replace(self, _fixed=scenario)
        else:
            data = copy.deepcopy(self.data)
            found = _set_quota((data.get("spec") or {}).get("manifests") or [], cluster_queue, flavor, resource, value)
            copied = dataclasses.replace(self, data=data)
        if not found:
            raise KueueplanError(f"ClusterQueue {cluster_queue} has no quota for {resource} on flavor {flavor}",
                                 file=self.file, hint="name a ClusterQueue, flavor and resource of the scenario")
        return copied

    # --------------------------------------------------------------------------- helpers

    def _probabilities(self) -> dict[int, float]:
        spec = self.data.get("spec") if isinstance(self.data, Mapping) else None
        out: dict[int, float] = {}
        for i, e in enumerate((spec or {}).get("expectations") or []):
            if isinstance(e, Mapping) and e.get("probability") is not None:
                p = e["probability"]
                if isinstance(p, str) and p.endswith("%"):
                    p = _number(p[:-1]) / 100 if _number(p[:-1]) is not None else None
                if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 1:
                    raise KueueplanError(f"expectation probability must be in (0, 1] or a percentage, got {e['probability']!r}",
                                         file=self.file, line=self._line(("spec", "expectations", i, "probability")))
                out[i] = float(p)
        return out

    def _line(self, where: Where) -> int | None:
        try:
            return self.lines.line_of(where) if self.lines is not None else None
        except Exception:  # noqa: BLE001 - a line is a courtesy
            return None

    def _resolve(self, name: Any, where: Where, many: bool = False) -> list[Path] | Path:
        from kueueplan.simulate.scenario import _Reader

        doc = _MappedDocument(self.data, self.file, self.lines, [])
        files = _Reader(doc, self.path)._resolve(name, where)  # inside the repository, like manifestFiles
        if many:
            return files
        if len(files) != 1:
            raise KueueplanError(f"workloadProfiles entry {name!r} must be one file", file=self.file,
                                 line=self._line(where))
        return files[0]


def _set_quota(manifests: list[Any], cluster_queue: str, flavor: str, resource: str, value: str) -> bool:
    found = False
    for m in manifests:
        if not (isinstance(m, Mapping) and m.get("kind") == "ClusterQueue"
                and (m.get("metadata") or {}).get("name") == cluster_queue):
            continue
        for group in (m.get("spec") or {}).get("resourceGroups") or []:
            for fl in group.get("flavors") or []:
                for r in fl.get("resources") or [] if fl.get("name") == flavor else []:
                    if r.get("name") == resource:
                        r["nominalQuota"] = value
                        found = True
    return found


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


class _MappedDocument:
    """A yamlio.Document stand-in for the expanded data: line lookups go to the entry each one came from."""

    def __init__(self, data: Any, file: str, original: Any, origins: list[Where]) -> None:
        self.data = data
        self.file = file
        self.index = getattr(original, "index", 0)
        self.line = getattr(original, "line", 1)
        self._original = original
        self._origins = origins

    def _map(self, path: Where) -> Where:
        if len(path) >= 3 and path[:2] == ("spec", "workloads") and isinstance(path[2], int) \
                and path[2] < len(self._origins):
            return self._origins[path[2]] + tuple(path[3:])
        return tuple(path)

    def line_of(self, path: Where = ()) -> int | None:
        return self._original.line_of(self._map(path)) if self._original is not None else self.line

    def column_of(self, path: Where = ()) -> int | None:
        return self._original.column_of(self._map(path)) if self._original is not None else None
