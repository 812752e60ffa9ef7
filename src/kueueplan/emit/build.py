"""`kueueplan build`: load the spec, compile every environment, render the files, write them safely."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kueueplan.compile.argocd import resource_customizations
from kueueplan.compile.configuration import helm_values as kueue_helm_values
from kueueplan.compile import EnvContext, argocd_application, compile_context, environment_names, flux_kustomization
from kueueplan.emit import render_environment
from kueueplan.emit.yaml import MARKER, dump
from kueueplan.emit.writer import write_tree
from kueueplan.errors import KueueplanError
from kueueplan.spec.load import load_spec, resolve_spec_dir


@dataclass
class BuildResult:
    environments: list[str]
    objects: dict[str, int] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)


def render(spec_dir: str | Path, out_dir: str | Path = "gen", envs: list[str] | None = None,
           argocd: bool = False, flux: bool = False, helm_values: bool = False) -> BuildResult:
    """Everything `build` would write, without writing it."""
    spec_dir = resolve_spec_dir(spec_dir)
    platform = load_spec(spec_dir)
    names = environment_names(platform, envs)
    result = BuildResult(environments=names)
    destinations: dict[str, tuple[EnvContext, set[tuple[str, str, str]]]] = {}
    for name in names:
        ctx = EnvContext.of(platform, name)
        manifests = compile_context(ctx, flux=flux)
        repo_path = _repo_path(Path(spec_dir), Path(out_dir), name)
        extras = {}
        app = argocd_application(ctx, repo_path, requested=argocd, manifests=manifests)
        if app is not None:
            _refuse_shared_destination(destinations, ctx, app, manifests)
            extras["argocd-application.yaml"] = app
        kustomization = flux_kustomization(ctx, repo_path, requested=flux, manifests=manifests)
        if kustomization is not None:
            extras["flux-kustomization.yaml"] = kustomization
        values = kueue_helm_values(ctx) if helm_values else None
        if values is not None:  # for a Kueue installed by its Helm chart (helm upgrade -f ...)
            extras["kueue-helm-values.yaml"] = values
        result.files.update(render_environment(name, manifests, extras))
        result.objects[name] = len(manifests)
    if destinations:
        if ARGOCD_FRAGMENT.split("/")[0] in names:
            raise KueueplanError(f"an environment named {ARGOCD_FRAGMENT.split('/')[0]!r} would hold Argo CD's "
                                 "argocd-cm fragment", hint="rename the environment")
        # Health checks are Argo CD-wide: one fragment to merge into argocd-cm, outside every synced folder.
        result.files[ARGOCD_FRAGMENT] = (MARKER + "\n# A patch: merge it into Argo CD's argocd-cm ConfigMap, never apply it alone:\n"
                                         "#   kubectl -n argocd patch configmap argocd-cm --type merge "
                                         f"--patch-file gen/{ARGOCD_FRAGMENT}  (gen/: this build's folder)\n---\n" + dump(resource_customizations()))
    return result


ARGOCD_FRAGMENT = "argocd-cm/resource-customizations.yaml"  # a folder no environment can sync


def _refuse_shared_destination(seen: dict[str, tuple[EnvContext, set[tuple[str, str, str]]]], ctx: EnvContext,
                               app: dict, manifests: list[dict]) -> None:
    """Two Applications that sync the same object to the same cluster fight over it (each prunes or
    overwrites the other's version): refuse environments whose destinations and objects overlap."""
    dest = app["spec"]["destination"]
    key = "name=" + dest["name"] if "name" in dest else "server=" + dest["server"]
    objects = {(str(m["kind"]), str(m["metadata"].get("namespace") or ""), str(m["metadata"].get("name")))
               for m in manifests if "name" in m["metadata"]}
    if key in seen:
        other, other_objects = seen[key]
        shared = sorted(objects & other_objects)
        if shared:
            kind, ns, name = shared[0]
            raise ctx.env.error(
                f"environments {other.name!r} and {ctx.name!r} both sync to Argo CD destination {key.split('=', 1)[1]}"
                f" and both write {kind} {ns + '/' if ns else ''}{name} ({len(shared)} shared object(s))",
                ("argocd",), "give each environment its own cluster: argocd.name or argocd.server")
    seen[key] = (ctx, objects)


def build(spec_dir: str | Path, out_dir: str | Path = "gen", envs: list[str] | None = None,
          argocd: bool = False, flux: bool = False, helm_values: bool = False) -> BuildResult:
    spec_path, out_path = resolve_spec_dir(spec_dir), Path(out_dir)
    _refuse_overlap(spec_path, out_path)
    result = render(spec_path, out_path, envs, argocd, flux, helm_values)
    # A full build prunes the folders of environments that no longer exist (generated files only).
    prune = [] if envs else _generated_folders(out_path, set(result.environments))
    if not envs and ARGOCD_FRAGMENT not in result.files and (out_path / ARGOCD_FRAGMENT).is_file():
        prune.append(ARGOCD_FRAGMENT.split("/")[0])  # no environment uses Argo CD any more (generated files only)
    result.changed = write_tree(out_path, result.files, prune_dirs=prune)
    return result


def _refuse_overlap(spec: Path, out: Path) -> None:
    s, o = spec.resolve(), out.resolve()
    if s == o or o in s.parents or (spec.is_dir() and s in o.parents):
        raise KueueplanError(f"output folder {out} overlaps the spec folder {spec}",
                             hint="write the build elsewhere, e.g. -o gen")


def _generated_folders(out: Path, keep: set[str]) -> list[str]:
    if not out.is_dir():
        return []
    return sorted(p.name for p in out.iterdir()
                  if p.is_dir() and p.name not in keep and (p / "kustomization.yaml").is_file())


def _repo_path(spec: Path, out: Path, env: str) -> str:
    """The env folder's path in the repository, guessing the repository root is the spec folder's parent."""
    try:
        rel = os.path.relpath((out / env).resolve(), spec.resolve().parent)
    except ValueError:
        rel = f"gen/{env}"
    return rel if not rel.startswith("..") else f"gen/{env}"
