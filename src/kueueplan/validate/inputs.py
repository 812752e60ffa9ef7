"""Gathers the objects to validate from files, folders, stdin and spec folders.

A YAML problem in one file becomes a KP001 finding and the other files are still checked; a path that does
not exist is a usage error (exit 2).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kueueplan.errors import KueueplanError
from kueueplan.kube import yamlio
from kueueplan.kube.objects import list_items
from kueueplan.kube.yamlio import Document, YamlError, load_text, refuse_linked_out, yaml_files
from kueueplan.validate.finding import Finding
from kueueplan.validate.model import Obj, make_obj

SPEC_API = re.compile(r"^apiVersion:\s*['\"]?kueueplan\.io/", re.M)
ENV_DOC = re.compile(r"^kind:\s*['\"]?Environment['\"]?\s*$", re.M)
# kueueplan documents that are not part of a spec (simulate's input): skipped among manifests.
NON_SPEC_KINDS = ("Scenario",)
POLICY_GROUP = "policy.kueueplan.io"


@dataclass
class Inputs:
    objects: list[Obj] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # KP001/KP002/KP003 found while loading
    policies: list[Document] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    kustomizations: list[str] = field(default_factory=list)  # kustomization files found: objects are raw


def gather(paths: list[str], stdin_text: str | None = None) -> Inputs:
    inputs = Inputs()
    for raw in paths:
        if raw == "-":
            text = stdin_text if stdin_text is not None else sys.stdin.read()
            _add_text(inputs, text, "<stdin>")
            continue
        path = Path(raw)
        if not path.exists():
            raise KueueplanError(f"no such file or folder: {raw}", hint="pass manifest files, folders, spec "
                                 "folders or - for stdin")
        if path.is_dir():
            _add_folder(inputs, path)
        else:
            refuse_linked_out(path)
            _add_file(inputs, path)
    return inputs


KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# Top-level fields of a kustomization (sigs.k8s.io/kustomize/api/types/kustomization.go): a document holding only
# these, with or without apiVersion/kind, is kustomize's build file, never an API object.
KUSTOMIZATION_FIELDS = frozenset((
    "apiVersion", "kind", "metadata", "resources", "bases", "components", "namespace", "namePrefix", "nameSuffix",
    "commonLabels", "labels", "commonAnnotations", "patches", "patchesStrategicMerge", "patchesJson6902",
    "images", "replicas", "replacements", "vars", "configMapGenerator", "secretGenerator", "generatorOptions",
    "generators", "transformers", "validators", "crds", "openapi", "helmCharts", "helmGlobals", "buildMetadata",
    "sortOptions", "configurations", "inventory", "helmChartInflationGenerator", "nameReference"))
KUSTOMIZE_KINDS = ("Kustomization", "Component")


def is_kustomization(data: Any) -> bool:
    """A kustomization in any valid form: kustomize.config.k8s.io Kustomization/Component, or no apiVersion/kind."""
    if not isinstance(data, dict) or not data or not set(map(str, data)) <= KUSTOMIZATION_FIELDS:
        return False
    api, kind = data.get("apiVersion"), data.get("kind")
    if api is None and kind is None:
        return any(k not in ("metadata",) for k in data)
    return str(api or "").startswith("kustomize.config.k8s.io/") and (kind in KUSTOMIZE_KINDS or kind is None)


def _add_folder(inputs: Inputs, folder: Path) -> None:
    """Spec folders inside `folder` go to the spec pipeline; every other YAML file is read as manifests."""
    files = yaml_files(folder)
    spec_files = {f for f in files if _is_spec_file(f)}
    spec_roots = _spec_roots(folder, files, spec_files)
    for root in spec_roots:
        _add_spec(inputs, root)
    rest = [f for f in files if not any(r == f.parent or r in f.parents for r in spec_roots)]
    builds = [f for f in rest if f.name in KUSTOMIZATION_FILES] + _extensionless_kustomizations(folder, spec_roots)
    applied_by = _applied_by(builds)
    # one note per apply unit: `kustomize build` of a folder another kustomization pulls in is not what applies
    inputs.kustomizations.extend(str(f) for f in sorted(builds) if applied_by.get(f.parent, f.parent) == f.parent)
    roots = sorted({f.parent for f in builds}, key=lambda p: -len(p.parts))
    for f in rest:
        root = next((r for r in roots if r == f.parent or r in f.parents), None)
        root = applied_by.get(root, root) if root is not None else None
        _add_file(inputs, f, universe=str(root) if root is not None else "", env=root.name if root else None)


KUSTOMIZE_REFERENCES = ("resources", "bases", "components")


def _applied_by(builds: list[Path]) -> dict[Path, Path]:
    """Kustomization folder -> the kustomization folder it is applied with: a folder that exactly one other
    kustomization among the inputs pulls in (`resources`, `bases`, `components`), directly or through others,
    belongs to that one's apply unit, so a root listing `base/` and `teams/x/` sees their flavors and queues
    together. A folder that several pull in (a base shared by dev and prod overlays) stays on its own."""
    folders = {f.parent.resolve(): f.parent for f in builds}
    parents: dict[Path, set[Path]] = {}
    for build in builds:
        for ref in _kustomize_references(build):
            target = (build.parent / ref).resolve()
            if target in folders and target != build.parent.resolve():
                parents.setdefault(folders[target], set()).add(build.parent)
    out: dict[Path, Path] = {}
    for folder in folders.values():
        top, seen = folder, {folder}
        while len(parents.get(top, ())) == 1:
            (up,) = parents[top]
            if up in seen:  # a reference cycle (kustomize refuses it): stay where we are
                break
            top = up
            seen.add(top)
        out[folder] = top
    return out


def _kustomize_references(build: Path) -> list[str]:
    """The local paths a kustomization pulls in; an unreadable one pulls in nothing (reported elsewhere)."""
    try:
        docs = yamlio.load_file(build)
    except KueueplanError:
        return []
    data = docs[0].data if docs else None
    if not isinstance(data, dict):
        return []
    refs = [r for key in KUSTOMIZE_REFERENCES for r in (data.get(key) or []) if isinstance(r, str)]
    return [r for r in refs if "://" not in r and not r.startswith(("git@", "github.com/"))]


def _extensionless_kustomizations(folder: Path, spec_roots: list[Path]) -> list[Path]:
    """`Kustomization` files (kustomize's third accepted name, no .yaml suffix), outside hidden folders."""
    found = []
    for f in folder.rglob("Kustomization"):
        rel = f.relative_to(folder).parts
        if f.is_file() and not any(p.startswith(".") for p in rel) and not any(r in f.parents for r in spec_roots):
            found.append(f)
    return found


def _head(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            return fh.read(262144).decode("utf-8", errors="replace")
    except OSError:
        return ""


_KIND = re.compile(r"^kind:\s*['\"]?([A-Za-z]+)", re.M)


def _is_spec_file(path: Path) -> bool:
    """A file of spec documents; a file of Scenarios only (simulate's input) is not one."""
    head = _head(path)
    if SPEC_API.search(head) is None:
        return False
    kinds = _KIND.findall(head)
    return not kinds or not all(kind in NON_SPEC_KINDS for kind in kinds)


def _spec_roots(folder: Path, files: list[Path], spec_files: set[Path]) -> list[Path]:
    """Each spec: the highest folder above an Environment document that holds spec files only.

    So `examples/x/` with `environments/` (the spec) beside `gen/` (its build) yields `examples/x/environments`.
    """
    by_dir: dict[Path, list[Path]] = {}
    for f in files:
        for parent in [f.parent, *f.parent.parents]:
            by_dir.setdefault(parent, []).append(f)
            if parent == folder:
                break
    roots: set[Path] = set()
    for f in sorted(spec_files):
        if not ENV_DOC.search(_head(f)):
            continue
        root = f.parent
        for parent in f.parent.parents:
            if folder != parent and folder not in parent.parents:
                break
            if not all(g in spec_files for g in by_dir.get(parent, [])):
                break
            root = parent
        roots.add(root)
    if spec_files and not roots:  # spec documents but no Environment: let the loader say what is missing
        roots.add(_common_dir(spec_files) or folder)
    return sorted(r for r in roots if not any(o != r and o in r.parents for o in roots))


def _common_dir(files: set[Path]) -> Path | None:
    parts = [f.parent.parts for f in files]
    shared = []
    for level in zip(*parts):
        if len(set(level)) != 1:
            break
        shared.append(level[0])
    return Path(*shared) if shared else None


def _load(path: Path) -> list[Document]:
    # yamlio takes the one-pass C route itself when the text has no anchors.
    return yamlio.load_file(path)


def _add_file(inputs: Inputs, path: Path, universe: str = "", env: str | None = None) -> None:
    """One file; objects under a kustomization root form their own universe (one GitOps apply unit)."""
    inputs.files.append(str(path))
    try:
        docs = _load(path)
    except yamlio.LimitError:
        raise  # over a resource limit: unusable input (exit 2), not one finding among others
    except KueueplanError as err:
        inputs.findings.append(_load_finding(err, str(path)))
        return
    start = len(inputs.objects)
    _add_docs(inputs, docs, str(path))
    for obj in inputs.objects[start:]:
        obj.universe, obj.env = obj.universe or universe, env  # a scenario's objects keep their own universe


def _add_text(inputs: Inputs, text: str, name: str) -> None:
    inputs.files.append(name)
    try:
        docs = load_text(text, file=name)
    except yamlio.LimitError:
        raise
    except KueueplanError as err:
        inputs.findings.append(_load_finding(err, name))
        return
    _add_docs(inputs, docs, name)


def _load_finding(err: KueueplanError, file: str) -> Finding:
    hint = f" ({err.hint})" if err.hint else ""
    return Finding("KP001", "error", err.file or file, err.line, "", f"{err.message}{hint}", err.column)


def _add_docs(inputs: Inputs, docs: list[Document], file: str) -> None:
    for doc in docs:
        data = doc.data
        if is_kustomization(data):
            continue  # kustomize's build file (kustomization.yaml, or piped in), not an API object
        problem = _shape_problem(data)
        if problem:
            inputs.findings.append(Finding("KP002", "error", file, doc.line, "", problem))
            continue
        if str(data["apiVersion"]).split("/")[0] == POLICY_GROUP:
            inputs.policies.append(doc)
            continue
        if str(data["apiVersion"]).startswith("kueueplan.io/"):
            if data.get("kind") in NON_SPEC_KINDS:
                _add_scenario(inputs, doc, file)  # a simulate scenario, read as `simulate` reads it
                continue
            inputs.findings.append(Finding(
                "KP002", "error", file, doc.line, f"{data.get('kind')}",
                "a kueueplan spec document among manifests; pass its whole spec folder instead"))
            continue
        if str(data["apiVersion"]).startswith("kustomize.config.k8s.io/"):
            continue  # other kustomize documents (e.g. a transformer config), not API objects
        items = list_items(data)
        if items is not None:
            for i, item in enumerate(items):
                problem = _shape_problem(item)
                if problem:
                    inputs.findings.append(Finding("KP002", "error", file, doc.line_of(("items", i)), "",
                                                   f"items[{i}]: {problem}"))
                    continue
                obj = make_obj(item, doc, file)
                obj.path_prefix = ("items", i)
                inputs.objects.append(obj)
            continue
        inputs.objects.append(make_obj(data, doc, file))


def _add_scenario(inputs: Inputs, doc: Document, file: str) -> None:
    """A Scenario loads as `kueueplan simulate` loads it (durations, manifestFiles inside the repository, spec,
    expectations): a problem is a KP119 finding at its line. Its manifests and workload templates are then
    validated like any object, as one cluster of their own."""
    from kueueplan.simulate.scenario import scenario_from_document

    name = doc.data.get("metadata", {}).get("name") if isinstance(doc.data.get("metadata"), dict) else None
    path = Path(file) if file != "<stdin>" else None
    try:
        try:
            # Without its text the document answers line lookups at once: a large scenario that loads
            # never pays for composing every position; only one with a problem is read again for its line.
            scenario_from_document(yamlio.Document(data=doc.data, file=doc.file, index=doc.index, line=doc.line),
                                   path)
        except KueueplanError:
            scenario_from_document(doc, path)
    except KueueplanError as err:
        hint = f" ({err.hint})" if err.hint else ""
        inputs.findings.append(Finding("KP119", "error", err.file or file, err.line, f"Scenario/{name or '?'}",
                                       f"{err.message}{hint}", err.column))
        return
    spec = doc.data["spec"]
    embedded = [(("spec", "manifests", i), m) for i, m in enumerate(spec.get("manifests") or [])]
    embedded += [(("spec", "workloads", i, "manifest"), w["manifest"]) for i, w in enumerate(spec.get("workloads") or [])
                 if isinstance(w, dict) and "manifest" in w]  # a `ref` entry points at an object of manifestFiles
    for where, data in embedded:
        if _shape_problem(data) is None:
            obj = make_obj(data, doc, file)
            obj.path_prefix, obj.universe = where, f"scenario:{file}:{doc.index}"
            inputs.objects.append(obj)


def _shape_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return (f"a Kubernetes object must be a mapping, not a {type(data).__name__}; "
                "each YAML document needs apiVersion, kind and metadata")
    missing = [k for k in ("apiVersion", "kind") if not isinstance(data.get(k), str) or not data.get(k)]
    if missing:
        return f"missing {' and '.join(missing)}: every Kubernetes object names its apiVersion and kind"
    return None


def _add_spec(inputs: Inputs, folder: Path) -> None:
    """Load a spec folder with the spec helper's loader, compile it and validate the manifests it yields."""
    inputs.files.append(str(folder))
    from kueueplan.validate.specinput import compiled_objects  # the spec pipeline, loaded only for spec folders

    try:
        objects = compiled_objects(folder)
    except yamlio.LimitError:
        raise
    except YamlError as err:  # a file of the folder is not YAML: the YAML rule, not the spec rule
        inputs.findings.append(_load_finding(err, str(folder)))
        return
    except KueueplanError as err:
        hint = f" ({err.hint})" if err.hint else ""
        inputs.findings.append(Finding("KP003", "error", err.file or str(folder), err.line, "",
                                       f"{err.message}{hint}", err.column))
        return
    inputs.objects.extend(objects)
