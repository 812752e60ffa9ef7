"""A PATH given to graph/diff/check: a spec folder (kueueplan.io/v1alpha1) or rendered manifests.

A spec folder is compiled in memory per environment (`kueueplan.compile`); a manifest folder or file is read
as it is. Either way the result is a `Side`: manifests per environment (rendered manifests are one
environment, named after the folder) and, for specs, the platform to simulate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from kueueplan.errors import KueueplanError
from kueueplan.kube.apiversion import TEAM_LABEL
from kueueplan.kube.objects import Cluster, read_cluster
from kueueplan.kube.yamlio import Document
from kueueplan.workflow.manifests import is_spec_document, load_documents



@dataclass
class Side:
    path: Path
    is_spec: bool
    # environment -> manifests (plain dicts, or Documents for rendered folders so errors keep file:line)
    envs: dict[str, list[Any]] = field(default_factory=dict)
    spec_teams: dict[str, str] = field(default_factory=dict)  # ClusterQueue -> Team, from the spec's Team docs

    def cluster(self, env: str) -> Cluster:
        return read_cluster(self.envs[env])

    def teams(self, env: str) -> dict[str, str]:
        """ClusterQueue name -> team (the spec's Teams, or the team label on rendered objects)."""
        out = dict(self.spec_teams)
        for doc in self.envs[env]:
            data = getattr(doc, "data", doc)
            if isinstance(data, Mapping) and data.get("kind") == "ClusterQueue":
                meta = data.get("metadata") or {}
                team = (meta.get("labels") or {}).get(TEAM_LABEL)
                if team and meta.get("name"):
                    out[str(meta["name"])] = str(team)
        return out


def _looks_like_spec(docs: list[Document]) -> bool:
    return any(is_spec_document(d.data) for d in docs)


def compile_spec(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Environment -> compiled manifests, through the spec helper's compiler."""
    from kueueplan.compile import compile_platform

    return {env: list(manifests) for env, manifests in compile_platform(path).items()}


def spec_teams(path: Path) -> dict[str, str]:
    from kueueplan.spec.load import load_spec

    return {(e.model.spec.clusterQueue or e.name): e.name for e in load_spec(path).entries["Team"]}


def load_side(path: str | Path, env: str | None = None) -> Side:
    """Read one side. `env` restricts a spec to one environment (error if it does not exist)."""
    root = Path(path)
    docs = load_documents([root])
    if _looks_like_spec(docs):
        envs = compile_spec(root)
        if env is not None:
            if env not in envs:
                raise KueueplanError(f"no environment {env!r} in {root} (known: {', '.join(sorted(envs)) or 'none'})")
            envs = {env: envs[env]}
        return Side(root, True, envs, spec_teams(root))
    envs = _rendered_envs(root, docs)
    if env is not None and len(envs) > 1:
        if env not in envs:
            raise KueueplanError(f"no environment {env!r} in {root} (known: {', '.join(sorted(envs))})")
        envs = {env: envs[env]}
    return Side(root, False, envs)


def _rendered_envs(root: Path, docs: list[Document]) -> dict[str, list[Any]]:
    """`gen/` with one folder per environment (build's layout) -> one entry each; otherwise one entry."""
    if root.is_dir() and not any(p.suffix in (".yaml", ".yml") for p in root.iterdir() if p.is_file()):
        subdirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
        # build's gen/ (and kustomize overlays/) hold one kustomization per environment; other folders of
        # folders (cluster/, teams/, ...) are one platform split into files
        if len(subdirs) > 1 and all((p / "kustomization.yaml").is_file() for p in subdirs):
            envs: dict[str, list[Any]] = {p.name: [] for p in subdirs}
            for doc in docs:
                envs[Path(doc.file).relative_to(root).parts[0]].append(doc)
            return {k: v for k, v in envs.items() if v}
    return {(root.stem if root.is_file() else root.name) or "manifests": docs}


def pick_env(side: Side, env: str | None) -> str:
    """The environment to show: the requested one, the only one, or an error listing the choices."""
    if env is not None and env in side.envs:
        return env
    if env is None and len(side.envs) == 1:
        return next(iter(side.envs))
    if env is None:
        raise KueueplanError(f"{side.path} has several environments ({', '.join(sorted(side.envs))})",
                             hint="choose one with --env")
    raise KueueplanError(f"no environment {env!r} in {side.path} (known: {', '.join(sorted(side.envs))})")
