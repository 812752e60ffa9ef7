"""Which CRD each custom resource is checked against.

In order: the CRDs given with `--crds` (they override the rest, kind by kind); a release fetched by
`kueueplan schemas pull` that is exactly the object's release; the schema pack's release of the same Kueue
(or KubeRay) minor. The object's Kueue release is its spec environment's `kueueVersion`, else `--kueue-version`,
else the newest the pack covers; KubeRay's is `--kuberay-version`, else the newest. Nothing here needs network.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kueueplan.validate import schemapack
from kueueplan.validate.crds import CrdSet, CrdVersion, cache_dir, load_crds

_LABEL = {"kueue": "Kueue", "kuberay": "KubeRay", "autoscaler": "Cluster Autoscaler"}


def pulled_dir(project: str, release: str) -> Path:
    """Where `kueueplan schemas pull` puts a release's CRDs (the pack's source layout: <project>/<tag>/)."""
    return cache_dir() / "crds" / project / release


def _pack_set(project: str, release: str) -> CrdSet:
    key = (project, release)
    hit = _PACK_SETS.get(key)
    if hit is None:
        hit = CrdSet()
        source = f"schema pack: {_LABEL[project]} {release}"
        for doc in schemapack.crd_documents(project, release).values():
            hit.add_document(doc, source)
        hit.sources.append(source)
        _PACK_SETS[key] = hit
    return hit


_PACK_SETS: dict[tuple[str, str], CrdSet] = {}  # compiled schemas and CEL programs live as long as the process


@dataclass
class Catalog:
    """The CRDs of one validate run; `lookup_for` picks by the object's release."""

    user: CrdSet | None = None
    kueue_version: str | None = None  # --kueue-version
    kuberay_version: str | None = None  # --kuberay-version
    use_pack: bool = True
    _sets: dict[tuple[str, str], CrdSet | None] = field(default_factory=dict)
    used_sets: list[CrdSet] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # "Kind.group" -> why its schema was not checked
    asked: set[tuple[str, str]] = field(default_factory=set)  # (group, kind) found in a used set

    # --- what rules call
    def lookup(self, group: str, kind: str, kueue_version: str | None = None) -> dict[str, CrdVersion] | None:
        if self.user is not None:
            found = self.user.lookup(group, kind)
            if found is not None:
                self._use(self.user, group, kind)
                return found
        project = schemapack.GROUP_PROJECT.get(group)
        if project is None or not self.use_pack:
            return None
        version = self._version(project, kueue_version)
        crds = self._release_set(project, version)
        found = crds.lookup(group, kind) if crds is not None else None
        if crds is None:
            self.skipped[f"{kind}.{group}"] = (
                f"{_LABEL[project]} {version} is not in the schema pack ({self.covered(project)}) nor pulled: run "
                f"`kueueplan schemas pull --{project} {_full(version)}` or pass its CRDs with --crds")
        elif found is not None:
            self._use(crds, group, kind)
        elif project != "autoscaler":  # the pack has only its ProvisioningRequest, not every autoscaler kind
            self.skipped[f"{kind}.{group}"] = f"{crds.sources[0].removeprefix('schema pack: ')} has no {kind} CRD"
        return found

    def release_without(self, group: str, kind: str, kueue_version: str | None = None) -> str | None:
        """The release ("Kueue v0.8.4") whose CRDs this object is checked against when that release has no CRD
        for its kind (a kind newer than the cluster's Kueue); None otherwise, or when --crds defines it."""
        project = schemapack.GROUP_PROJECT.get(group)
        if project in (None, "autoscaler") or not self.use_pack or (self.user and self.user.lookup(group, kind)):
            return None
        crds = self._release_set(project, self._version(project, kueue_version))
        if crds is None or crds.lookup(group, kind) is not None:
            return None
        return crds.sources[0].removeprefix("schema pack: ") if crds.sources else None

    def check_for(self, crd: CrdVersion) -> Any:
        for crds in [self.user, *self._sets.values()]:
            if crds is not None and (crds.versions.get((crd.group, crd.kind)) or {}).get(crd.version) is crd:
                return crds.check_for(crd)
        raise KeyError(crd)  # pragma: no cover - a CrdVersion always comes from one of our sets

    # --- what reports show
    @property
    def sources(self) -> list[str]:
        return sorted({s for crds in self.used_sets for s in crds.sources}, key=_source_order)

    def describe(self) -> list[dict[str, Any]]:
        """The CRDs this run looked up (not every CRD of a pack release), with the versions it checked."""
        return [entry for crds in self.used_sets for entry in crds.describe()
                if (entry["group"], entry["kind"]) in self.asked]

    @staticmethod
    def covered(project: str) -> str:
        tags = schemapack.releases(project)
        return f"{tags[0]} to {tags[-1]}" if tags else "none"

    # --- internals
    def _version(self, project: str, kueue_version: str | None) -> str | None:
        """The release asked for: the object's Kueue release, --kuberay-version; the autoscaler's newest."""
        if project == "kueue":
            return kueue_version or self.kueue_version
        return self.kuberay_version if project == "kuberay" else None

    def _use(self, crds: CrdSet, group: str, kind: str) -> None:
        self.asked.add((group, kind))
        if all(crds is not s for s in self.used_sets):
            self.used_sets.append(crds)

    def _release_set(self, project: str, version: str | None) -> CrdSet | None:
        key = (project, version or "")
        if key not in self._sets:
            self._sets[key] = _find_release(project, version)
        return self._sets[key]


def _source_order(source: str) -> tuple[Any, ...]:
    """--crds paths first, then pack releases by project and release."""
    parts = source.split()
    if source.startswith("schema pack: ") and len(parts) == 4:
        return (1, parts[2], schemapack.release_key(parts[3]))
    return (0, source, ())


def _full(version: str | None) -> str:
    """A tag to suggest for `schemas pull`: v0.20 -> v0.20.0."""
    text = (version or "").strip()
    text = text if text.startswith("v") else f"v{text}"
    return text if text.count(".") >= 2 else f"{text}.0"


def _find_release(project: str, version: str | None) -> CrdSet | None:
    if version:
        exact = pulled_dir(project, _full(version))
        if schemapack.RELEASE.fullmatch(_full(version)) and exact.is_dir() and any(exact.glob("*.yaml")):
            return load_crds([exact])
    release = schemapack.pack_release(project, version)
    return _pack_set(project, release) if release else None


def catalog(crds: list[str | Path] | None, kueue_version: str | None = None,
            kuberay_version: str | None = None, use_pack: bool = True) -> Catalog:
    """The run's catalogue: `crds` (the --crds paths) loaded now, pack releases when an object asks."""
    return Catalog(user=load_crds(list(crds)) if crds else None, kueue_version=kueue_version,
                   kuberay_version=kuberay_version, use_pack=use_pack)


def check_version(project: str, version: str | None) -> None:
    """--kueue-version / --kuberay-version: a usage error (exit 2) unless it reads as a release."""
    import re

    from kueueplan.errors import KueueplanError

    if version is not None and not re.fullmatch(r"v?\d+\.\d+(\.\d+)?", version.strip()):
        raise KueueplanError(f"--{project}-version {version!r} is not a release like v0.19 or v0.19.2",
                             hint=f"the schema pack covers {_LABEL[project]} {Catalog.covered(project)}")
