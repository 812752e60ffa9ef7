"""CustomResourceDefinitions: finding them, caching their parsed form, compiling their schemas once.

`--crds PATH` accepts a folder (searched recursively), a CRD file, or Kueue's release `manifests.yaml`
(non-CRD documents in it are ignored). Parsed CRDs are cached as JSON keyed by the file's SHA-256, so the
1.4 MB KubeRay RayJob CRD costs 5 ms instead of 450 ms after the first run. Before that, a file in
controller-gen's layout is only scanned for its group, kind and versions, and parsed when an input has that
kind: a Kueue-only platform never pays for the KubeRay or Workload schemas.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kueueplan.errors import InputRefusedError, KueueplanError
from kueueplan.kube.yamlio import load_text, yaml_files
from kueueplan.validate.celcost import CelCostError, check_schema
from kueueplan.validate.celrules import CelEvaluator
from kueueplan.validate.schema import Check, SchemaCompiler


def cache_dir() -> Path:
    """$KUEUEPLAN_CACHE_DIR, else $XDG_CACHE_HOME/kueueplan, else ~/.cache/kueueplan."""
    env = os.environ.get("KUEUEPLAN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kueueplan"


@dataclass
class CrdVersion:
    group: str
    kind: str
    version: str
    schema: dict[str, Any]
    served: bool
    storage: bool
    deprecated: bool
    deprecation_warning: str | None
    scope: str
    source: str
    _check: Check | None = field(default=None, repr=False)


@dataclass
class CrdSet:
    """All loaded CRD versions, by (group, kind)."""

    versions: dict[tuple[str, str], dict[str, CrdVersion]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    evaluator: CelEvaluator = field(default_factory=CelEvaluator)
    used: set[tuple[str, str, str]] = field(default_factory=set)
    # scanned, not parsed yet: (group, kind) -> (file, version names)
    pending: dict[tuple[str, str], tuple[Path, list[str]]] = field(default_factory=dict)

    def lookup(self, group: str, kind: str, kueue_version: str | None = None) -> dict[str, CrdVersion] | None:
        """The CRD's versions; `kueue_version` matters only to the catalogue (validate.catalog), not here."""
        waiting = self.pending.get((group, kind))
        if waiting is not None:
            self._parse(waiting[0])
        return self.versions.get((group, kind))

    def _parse(self, path: Path) -> None:
        for doc in _parse_cached(path):
            self.add_document(doc, str(path))
        for key in [k for k, (f, _) in self.pending.items() if f == path]:
            del self.pending[key]

    def check_for(self, crd: CrdVersion) -> Check:
        if crd._check is None:
            try:  # refuse rules that could not finish in time before evaluating any (validate/celcost.py)
                check_schema(crd.schema, f"{crd.kind}.{crd.group}/{crd.version} ")
            except CelCostError as err:
                err.file = crd.source
                raise
            compiler = SchemaCompiler(crd=True, cel_hook=self.evaluator,
                                      skip_root=("metadata", "apiVersion", "kind"))
            crd._check = compiler.compile_root(crd.schema)
        self.used.add((crd.group, crd.kind, crd.version))
        return crd._check

    def describe(self) -> list[dict[str, Any]]:
        """What was loaded: one entry per CRD, with its served versions and whether this run used it."""
        known = {key: (sorted(versions), next(iter(versions.values())).source)
                 for key, versions in self.versions.items()}
        known.update({key: (sorted(names), str(path)) for key, (path, names) in self.pending.items()})
        out = []
        for (group, kind), (versions, source) in sorted(known.items()):
            out.append({"group": group, "kind": kind, "versions": versions,
                        "used": sorted(v for (g, k, v) in self.used if g == group and k == kind),
                        "source": source})
        return out

    def add_document(self, doc: Any, source: str) -> bool:
        if not (isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition"):
            return False
        spec = doc.get("spec")
        if not isinstance(spec, dict):
            spec = {}
        names = spec.get("names")
        group, kind = (spec.get("group"), names.get("kind")) if isinstance(names, dict) else (None, None)
        if not group or not kind:
            return False
        what = f"CustomResourceDefinition {kind}.{group}"
        versions = _shaped(spec.get("versions") or [], list, f"{what}: spec.versions", source)
        entry = self.versions.setdefault((str(group), str(kind)), {})
        for i, ver in enumerate(versions):
            ver = _shaped(ver, dict, f"{what}: spec.versions[{i}]", source)
            name = ver.get("name")
            if not isinstance(name, str) or not name:
                raise CrdError(f"{what}: spec.versions[{i}] has no name", file=source,
                                     hint="every CRD version needs `name:` (e.g. v1beta1)")
            schema = _shaped(ver.get("schema") or {}, dict, f"{what}: spec.versions[{i}].schema", source)
            schema = _shaped(schema.get("openAPIV3Schema") or {}, dict,
                             f"{what}: spec.versions[{i}].schema.openAPIV3Schema", source)
            entry[name] = CrdVersion(str(group), str(kind), name, schema, bool(ver.get("served", True)),
                                     bool(ver.get("storage")), bool(ver.get("deprecated")),
                                     ver.get("deprecationWarning"), str(spec.get("scope", "Namespaced")), source)
        return True


class CrdError(InputRefusedError):
    """A CRD file kueueplan cannot use."""


def _shaped(value: Any, kind: type, where: str, source: str) -> Any:
    """`value` when it is a `kind` (list / mapping), else a clear error naming the CRD file."""
    if not isinstance(value, kind):
        raise CrdError(f"malformed {where}: expected a {'list' if kind is list else 'mapping'}, "
                             f"got {type(value).__name__}", file=source,
                             hint="pass the CRD files your cluster runs (e.g. Kueue's release manifests.yaml)")
    return value


def load_crds(paths: list[str | Path]) -> CrdSet:
    """Load CRDs once per process for the same paths (schemas and CEL programs stay compiled)."""
    key = tuple(str(Path(p).resolve()) for p in paths)
    stamp = tuple(_stamp(Path(p)) for p in key)
    hit = _LOADED.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    crds = _load_crds(paths)
    _LOADED[key] = (stamp, crds)
    return crds


_LOADED: dict[tuple[str, ...], tuple[Any, CrdSet]] = {}


def _stamp(path: Path) -> Any:
    try:
        files = [path] if path.is_file() else sorted(path.rglob("*"))
        return tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files if f.is_file())
    except OSError:
        return None


def _load_crds(paths: list[str | Path]) -> CrdSet:
    crds = CrdSet()
    for path in paths:
        p = Path(path)
        if not p.exists():
            raise KueueplanError(f"--crds path does not exist: {p}", hint="pass a CRD folder, a CRD file or "
                                 "Kueue's manifests.yaml, or run `kueueplan schemas pull`")
        files = yaml_files(p, (".yaml", ".yml", ".json")) if p.is_dir() else [p]
        found = 0
        for f in files:
            raw = f.read_bytes()
            if b"CustomResourceDefinition" not in raw:
                continue
            scanned = None if _cache_path(raw).exists() else _scan(raw)
            if scanned is None:
                for doc in _parse_cached(f, raw):
                    found += crds.add_document(doc, str(f))
                continue
            for group, kind, names in scanned:
                crds.pending[(group, kind)] = (f, names)
            found += len(scanned)
        if found == 0:
            raise KueueplanError(f"no CustomResourceDefinition found in {p}", file=str(p))
        crds.sources.append(str(p))
    return crds


_DOCUMENT = re.compile(r"^---[ \t]*$", re.M)
_GROUP = re.compile(r"^  group: *([\w.-]+) *$", re.M)
_KIND = re.compile(r"^  names:\n(?:    .*\n)*?    kind: *(\w+) *$", re.M)
_VERSION = re.compile(r"^(?:    |  - )name: *(v\w+) *$", re.M)


def _scan(raw: bytes) -> list[tuple[str, str, list[str]]] | None:
    """(group, kind, version names) of each CRD in a file, read by pattern from controller-gen's layout;
    None when the file does not fit the layout (parse it then)."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    out = []
    for chunk in _DOCUMENT.split(text):
        if not re.search(r"^kind: *CustomResourceDefinition *$", chunk, re.M):
            continue
        group, kind, names = _GROUP.search(chunk), _KIND.search(chunk), _VERSION.findall(chunk)
        if group is None or kind is None or not names:
            return None
        out.append((group[1], kind[1], names))
    return out or None


# Bumped when what a cached parse means changes: entries written by kueueplan versions that loaded CRDs without
# the safe loader's limits (an alias bomb beside a CRD went unnoticed) are never read again.
_CACHE_FORMAT = b"kueueplan-crd-cache-2\0"


def _cache_path(raw: bytes) -> Path:
    return cache_dir() / "parsed" / f"{hashlib.sha256(_CACHE_FORMAT + raw).hexdigest()}.json"


def _parse_cached(path: Path, raw: bytes | None = None) -> list[Any]:
    raw = path.read_bytes() if raw is None else raw
    if b"CustomResourceDefinition" not in raw:
        return []
    cached = _cache_path(raw)
    try:
        return json.loads(cached.read_text())
    except (OSError, ValueError):
        pass
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CrdError("cannot read CRD file: not UTF-8 text", file=str(path)) from None
    # The same safe loader, with the same node, alias and depth limits, as every other input: a CRD comes
    # from the repository too (an alias bomb in one must not exhaust the runner).
    docs = [d.data for d in load_text(text, file=str(path))
            if isinstance(d.data, dict) and d.data.get("kind") == "CustomResourceDefinition"]
    _write_atomic(cached, json.dumps(docs))
    return docs


def _write_atomic(target: Path, text: str) -> None:
    """Best effort: a read-only cache only costs speed."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except OSError:
        pass
