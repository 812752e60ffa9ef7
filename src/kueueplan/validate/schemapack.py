"""The schema pack: the Kueue and KubeRay release CRDs kueueplan supports, shipped inside the package.

`derive()` turns release CRD files into the pack (`scripts/schema-pack` runs it): descriptions are dropped,
everything the API server validates with is kept (types, enums, formats, min/max, patterns, required,
defaults, `x-kubernetes-*` markers, CEL rules in `x-kubernetes-validations`). Schema nodes are stored once by
content hash, so the PodTemplateSpec that every RayJob, RayCluster and Workload schema of every release embeds
costs its bytes once. The pack also pins the SHA-256 of every release file it was derived from, which
`kueueplan schemas pull` checks downloads against.

Layout (JSON, gzip): {"format": 1, "releases": {"kueue": {"v0.19.2": {"files": {name: sha256},
"crds": {"Kind.group": node-ref}}}, "kuberay": {...}}, "nodes": {hash: node}}; inside a node, a child that
is stored on its own is written {"$n": hash} ("$" keys do not exist in CRD schemas: the API server forbids
`$ref` and `$schema`).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml

from kueueplan.errors import KueueplanError

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

PACK_PATH = Path(__file__).parent / "data" / "schemapack.json.gz"
# release line -> the API group its CRDs serve; autoscaler: Cluster Autoscaler's ProvisioningRequest (the API
# Kueue's provisioning admission check creates), by cluster-autoscaler release (tag cluster-autoscaler-X.Y.Z)
PROJECTS = {"kueue": "kueue.x-k8s.io", "kuberay": "ray.io", "autoscaler": "autoscaling.x-k8s.io"}
GROUP_PROJECT = {group: project for project, group in PROJECTS.items()}
RELEASE = re.compile(r"v\d+\.\d+\.\d+")  # fullmatch only: "$" also matches before a final newline
_REF = "$n"
_INLINE_BELOW = 48  # bytes of canonical JSON: smaller nodes cost less inline than as a reference
# schema keywords whose value is one schema / a list of schemas / a map of name -> schema
_ONE = ("items", "additionalProperties", "not", "additionalItems")
_MANY = ("allOf", "anyOf", "oneOf")
_MAP = ("properties", "patternProperties", "definitions", "dependencies")
_DROP = ("description", "example", "externalDocs")


# --------------------------------------------------------------------------- deriving

def strip_schema(node: Any) -> Any:
    """An OpenAPI v3 schema without its prose: every keyword kept except description/example/externalDocs.
    Property names are data, not keywords: a property called `description` stays."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP:
            continue
        if key in _MAP and isinstance(value, dict):
            out[key] = {name: strip_schema(sub) for name, sub in value.items()}
        elif key in _MANY and isinstance(value, list):
            out[key] = [strip_schema(sub) for sub in value]
        elif key in _ONE:
            out[key] = [strip_schema(s) for s in value] if isinstance(value, list) else strip_schema(value)
        else:
            out[key] = value
    return out


def strip_crd(doc: dict[str, Any]) -> dict[str, Any]:
    """What validation reads of a CRD: group, kind, scope, and per version its flags and stripped schema."""
    spec = doc.get("spec") or {}
    names = spec.get("names") or {}
    versions = []
    for ver in spec.get("versions") or []:
        entry = {k: ver[k] for k in ("name", "served", "storage", "deprecated", "deprecationWarning") if k in ver}
        schema = (ver.get("schema") or {}).get("openAPIV3Schema")
        if schema is not None:
            entry["schema"] = {"openAPIV3Schema": strip_schema(schema)}
        versions.append(entry)
    return {"apiVersion": doc.get("apiVersion"), "kind": "CustomResourceDefinition",
            "metadata": {"name": (doc.get("metadata") or {}).get("name")},
            "spec": {"group": spec.get("group"), "names": {"kind": names.get("kind"), "plural": names.get("plural")},
                     "scope": spec.get("scope", "Namespaced"), "versions": versions}}


def read_release(folder: Path) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """The CRD files of one release folder: ({file name: sha256}, CRD documents), in file-name order."""
    files: dict[str, str] = {}
    docs: list[dict[str, Any]] = []
    for path in sorted(folder.iterdir()):
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            continue
        raw = path.read_bytes()
        files[path.name] = hashlib.sha256(raw).hexdigest()
        for doc in yaml.load_all(raw.decode("utf-8-sig"), Loader=_Loader):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                docs.append(doc)
    return files, docs


class _Store:
    """Content-addressed nodes: identical subtrees (within and across releases) are stored once."""

    def __init__(self) -> None:
        self.nodes: dict[str, Any] = {}

    def put(self, node: Any) -> Any:
        """The node with its large children replaced by references; itself a reference when large."""
        if isinstance(node, dict):
            node = {k: self.put(v) for k, v in node.items()}
        elif isinstance(node, list):
            node = [self.put(v) for v in node]
        else:
            return node
        text = json.dumps(node, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if len(text) < _INLINE_BELOW:
            return node
        key = hashlib.sha256(text.encode()).hexdigest()[:20]
        self.nodes.setdefault(key, node)
        return {_REF: key}


def derive(source: Path, releases: dict[str, Iterable[str]] | None = None) -> dict[str, Any]:
    """The pack from `source/<project>/<release>/*.yaml` (project: kueue, kuberay), e.g. CRDs taken with
    `git show vX.Y.Z:config/components/crd/bases/...`; `releases` limits which releases are read."""
    store = _Store()
    out: dict[str, Any] = {"format": 1, "releases": {}, "nodes": store.nodes}
    for project in PROJECTS:
        root = source / project
        if not root.is_dir():
            continue
        wanted = set(releases[project]) if releases and project in releases else None
        for folder in sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: release_key(p.name)):
            if not RELEASE.fullmatch(folder.name) or (wanted is not None and folder.name not in wanted):
                continue
            files, docs = read_release(folder)
            crds = {}
            for doc in docs:
                crd = strip_crd(doc)
                crds[f"{crd['spec']['names']['kind']}.{crd['spec']['group']}"] = store.put(crd)
            out["releases"].setdefault(project, {})[folder.name] = {"files": files, "crds": dict(sorted(crds.items()))}
    out["nodes"] = dict(sorted(store.nodes.items()))
    return out


def encode(pack: dict[str, Any]) -> bytes:
    """Deterministic bytes: the same CRDs always give the same file (mtime 0 in the gzip header)."""
    text = json.dumps(pack, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return gzip.compress(text, compresslevel=9, mtime=0)


# --------------------------------------------------------------------------- reading

def release_key(tag: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", tag)[:3]) or (0,)


@lru_cache(maxsize=1)
def load_pack(path: Path = PACK_PATH) -> dict[str, Any]:
    try:
        return json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, ValueError) as err:
        raise KueueplanError(f"cannot read kueueplan's schema pack {path}: {err}",
                             hint="reinstall kueueplan, or pass the CRDs with --crds") from None


def releases(project: str) -> list[str]:
    """The releases of `project` (kueue, kuberay) the pack covers, oldest first."""
    return sorted(load_pack()["releases"].get(project, {}), key=release_key)


def newest(project: str) -> str:
    return releases(project)[-1]


def pinned_files(project: str, release: str) -> dict[str, str] | None:
    """{file name: sha256} of a release the pack was derived from, else None."""
    entry = load_pack()["releases"].get(project, {}).get(release)
    return dict(entry["files"]) if entry else None


def pack_release(project: str, version: str | None) -> str | None:
    """The pack release for a version as users write it (v0.19, v0.19.2, 0.15.3; None: the newest): the
    same release if the pack has it, else the pack's release of the same minor, else None."""
    if not version:
        return newest(project)
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if not m:
        return None
    tags = releases(project)
    exact = f"v{m[1]}.{m[2]}.{m[3]}" if m[3] is not None else None
    if exact in tags:
        return exact
    same_minor = [t for t in tags if release_key(t)[:2] == (int(m[1]), int(m[2]))]
    return same_minor[-1] if same_minor else None


def crd_documents(project: str, release: str) -> dict[str, dict[str, Any]]:
    """{"Kind.group": CRD document} of one pack release, rebuilt from the shared nodes."""
    pack = load_pack()
    entry = pack["releases"][project][release]
    return {name: _resolve(ref, pack["nodes"], {}) for name, ref in entry["crds"].items()}


def _resolve(node: Any, nodes: dict[str, Any], memo: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_resolve(v, nodes, memo) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get(_REF) if len(node) == 1 else None
    if ref is not None:
        if ref not in memo:
            memo[ref] = _resolve(nodes[ref], nodes, memo)
        return memo[ref]
    return {k: _resolve(v, nodes, memo) for k, v in node.items()}


def main(argv: list[str] | None = None) -> int:
    """`python -m kueueplan.validate.schemapack SOURCE [-o FILE]`: derive and write the pack (scripts/schema-pack)."""
    import argparse

    parser = argparse.ArgumentParser(prog="schema-pack", description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="folder with kueue/<vX.Y.Z>/*.yaml, kuberay/<vX.Y.Z>/*.yaml and "
                                                  "autoscaler/<vX.Y.Z>/*.yaml")
    parser.add_argument("-o", "--output", type=Path, default=PACK_PATH)
    args = parser.parse_args(argv)
    pack = derive(args.source)
    if not pack["releases"]:
        parser.error(f"no release folders under {args.source}/kueue or {args.source}/kuberay")
    data = encode(pack)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.output.with_name(args.output.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(args.output)
    raw = len(json.dumps(pack, separators=(",", ":")))
    for project, tags in pack["releases"].items():
        print(f"{project}: {', '.join(sorted(tags, key=release_key))}")
    print(f"{len(pack['nodes'])} distinct schema nodes; {raw:,} bytes of JSON, {len(data):,} bytes gzipped "
          f"-> {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
