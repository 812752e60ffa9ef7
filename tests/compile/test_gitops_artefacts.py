"""The Argo CD Application and Flux Kustomization that `build --argocd --flux` writes, checked against the
real CRDs of Argo CD and kustomize-controller (a compact schema derived by scripts/gitops-crds, with its source
commit recorded), and the choices that make them converge."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kueueplan.emit.build import ARGOCD_FRAGMENT, build
from kueueplan.validate.celrules import CelEvaluator
from kueueplan.validate.schema import SchemaCompiler

REPO = Path(__file__).resolve().parents[2]
CRDS = json.loads((Path(__file__).parent / "data" / "gitops-crds.json").read_text(encoding="utf-8"))


def check(obj: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Issues the API server would report for `obj` (unknown fields, schema, CEL), from the derived CRD."""
    group, version = obj["apiVersion"].split("/")
    crd = CRDS[f"{group}/{obj['kind']}"]
    compiled = SchemaCompiler(crd=True, cel_hook=CelEvaluator(), skip_root=("metadata", "apiVersion", "kind"))
    issues: list[tuple[Any, ...]] = []
    compiled.compile_root(crd["versions"][version])(obj, (), issues)
    return issues


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("repo")
    shutil.copytree(REPO / "environments", repo / "environments")
    build(repo / "environments", repo / "gen", argocd=True, flux=True)
    return repo


def _load(path: Path) -> dict[str, Any]:
    return next(d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d)


def test_schemas_record_their_source() -> None:
    app, kustomization = CRDS["argoproj.io/Application"], CRDS["kustomize.toolkit.fluxcd.io/Kustomization"]
    assert app["source"]["repository"] == "https://github.com/argoproj/argo-cd"
    assert app["source"]["version"].startswith("3.") and len(app["source"]["commit"]) == 40
    assert kustomization["source"]["version"].startswith("v1.9")
    assert "description" not in json.dumps(CRDS).replace('"description":{', "")  # documentation stripped


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_application_and_kustomization_pass_the_upstream_crds(built: Path, env: str) -> None:
    app = _load(built / "gen" / env / "argocd-application.yaml")
    kustomization = _load(built / "gen" / env / "flux-kustomization.yaml")
    assert check(app) == []
    assert check(kustomization) == []
    # The check can fail: a misspelt field or a wrong type is reported as the API server would.
    broken = json.loads(json.dumps(app))
    broken["spec"]["ignoreDifference"] = broken["spec"].pop("ignoreDifferences")
    broken["spec"]["syncPolicy"]["retry"]["limit"] = "5"
    assert {kind for _, kind, _ in check(broken)} == {"unknown-field", "schema"}
    bad_flux = json.loads(json.dumps(kustomization))
    bad_flux["spec"]["ignore"][0]["target"]["kinds"] = "RayJob"
    assert [kind for _, kind, _ in check(bad_flux)] == ["unknown-field"]


def test_application_converges_instead_of_fighting_kueue(built: Path) -> None:
    app = _load(built / "gen" / "prod" / "argocd-application.yaml")
    assert app["metadata"]["annotations"]["argocd.argoproj.io/compare-options"] == "ServerSideDiff=true"
    options = app["spec"]["syncPolicy"]["syncOptions"]
    assert "ServerSideApply=true" in options and "ApplyOutOfSyncOnly=true" in options
    assert not any(o.startswith("RespectIgnoreDifferences") for o in options)
    assert app["spec"]["syncPolicy"]["retry"]["limit"] > 0
    assert app["spec"]["source"]["repoURL"] == "https://github.com/example-org/ml-platform.git"
    assert app["spec"]["destination"] == {"name": "prod-cluster"}
    dev = _load(built / "gen" / "dev" / "argocd-application.yaml")
    assert dev["spec"]["destination"] != app["spec"]["destination"]
    for entry in app["spec"]["ignoreDifferences"]:
        assert entry["name"] and entry["namespace"] and "jsonPointers" not in entry
        assert "managedFieldsManagers" not in entry  # Kueue would own whole atomic lists (see compile/argocd.py)


def test_kustomization_waits_on_queues_not_on_held_jobs(built: Path) -> None:
    spec = _load(built / "gen" / "prod" / "flux-kustomization.yaml")["spec"]
    assert "wait" not in spec
    queues = [m for f in ("clusterqueues.yaml", "localqueues.yaml")
              for m in yaml.safe_load_all((built / "gen" / "prod" / f).read_text()) if m]
    assert sorted((h["kind"], h["name"]) for h in spec["healthChecks"]) == sorted(
        (q["kind"], q["metadata"]["name"]) for q in queues)
    assert {e["kind"] for e in spec["healthCheckExprs"]} == {"ClusterQueue", "LocalQueue"}
    assert {r["target"]["kind"] for r in spec["ignore"]} == {"RayJob", "RayCluster"}


def test_health_checks_ship_as_a_fragment_outside_every_synced_folder(built: Path) -> None:
    fragment = built / "gen" / ARGOCD_FRAGMENT
    data = _load(fragment)
    # A merge patch of argocd-cm: only the health keys, no namespace, no other data that would replace Argo CD's.
    assert data["kind"] == "ConfigMap" and data["metadata"] == {"name": "argocd-cm"}
    assert set(data) == {"apiVersion", "kind", "metadata", "data"}
    assert all(k.startswith("resource.customizations.health.") for k in data["data"])
    assert not (fragment.parent / "kustomization.yaml").exists()
    synced = {Path(_load(p)["spec"]["source"]["path"]).name for p in (built / "gen").glob("*/argocd-application.yaml")}
    assert fragment.parent.name not in synced
    assert not list((built / "gen").glob("*/argocd-cm*.yaml"))


def test_namespaces_are_never_pruned_without_a_human(built: Path) -> None:
    for ns in yaml.safe_load_all((built / "gen" / "prod" / "namespaces.yaml").read_text()):
        if ns:
            annotations = ns["metadata"]["annotations"]
            assert annotations["argocd.argoproj.io/sync-options"] == "Prune=confirm,Delete=confirm"
            assert annotations["kustomize.toolkit.fluxcd.io/prune"] == "disabled"


def test_source_hydrator_layout(tmp_path: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    prod = spec / "env-prod.yaml"
    prod.write_text(prod.read_text() + "    sourceHydrator: true\n", encoding="utf-8")
    build(spec, tmp_path / "gen", envs=["prod"], argocd=True)
    app = _load(tmp_path / "gen" / "prod" / "argocd-application.yaml")
    assert "source" not in app["spec"]
    assert app["spec"]["sourceHydrator"] == {
        "drySource": {"repoURL": "https://github.com/example-org/ml-platform.git", "targetRevision": "HEAD",
                      "path": "gen/prod"},
        "syncSource": {"targetBranch": "environments/prod", "path": "prod"}}
    assert check(app) == []


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kueueplan", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_argocd_without_a_repository_url_is_a_located_error(tmp_path: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    prod = spec / "env-prod.yaml"
    text = prod.read_text()
    prod.write_text(text[:text.index("  # Argo CD:")], encoding="utf-8")
    result = _cli("build", "environments", "-o", "gen", "--argocd", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "env-prod.yaml" in result.stderr and "repoURL" in result.stderr
    assert not (tmp_path / "gen").exists()  # never a half-written gen/


def test_two_environments_syncing_the_same_objects_to_one_cluster_are_refused(tmp_path: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    dev = spec / "env-dev.yaml"
    dev.write_text(dev.read_text().replace("name: dev-cluster", "name: prod-cluster"), encoding="utf-8")
    result = _cli("build", "environments", "-o", "gen", cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "both sync to Argo CD destination prod-cluster" in result.stderr and "ClusterQueue" in result.stderr


FORCE = "kustomize.toolkit.fluxcd.io/force"


def _objects(folder: Path) -> list[dict[str, Any]]:
    return [d for f in sorted(folder.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text(encoding="utf-8"))
            if isinstance(d, dict) and d.get("metadata")]


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_flux_may_recreate_local_queues_and_nothing_else(built: Path, env: str) -> None:
    """Flux recreates a force-annotated object only when its apply fails as immutable (fluxcd/pkg
    ssa/manager_apply.go): LocalQueues (spec.clusterQueue is immutable; no finalizer, no work of their own) carry
    the annotation; queues and flavors with Kueue's in-use finalizer, and every workload, never do."""
    objects = _objects(built / "gen" / env)
    forced = sorted((o["kind"], o["metadata"]["name"]) for o in objects
                    if (o["metadata"].get("annotations") or {}).get(FORCE) == "enabled")
    local_queues = sorted((o["kind"], o["metadata"]["name"]) for o in objects if o["kind"] == "LocalQueue")
    assert local_queues and forced == local_queues
    workloads = [o for o in objects if o["kind"] in ("Job", "RayJob", "RayCluster", "Pod", "JobSet", "PyTorchJob")]
    assert workloads and not any(FORCE in json.dumps(w) for w in workloads)
    # The Kustomization itself never forces everything (spec.force would recreate running Jobs too).
    assert "force" not in _load(built / "gen" / env / "flux-kustomization.yaml")["spec"]


def test_flux_force_follows_the_environment_and_builds_identically(tmp_path: Path) -> None:
    from kueueplan.emit.build import render

    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    plain = render(spec, tmp_path / "gen").files  # the demo has no `flux:` settings and no --flux
    assert not any(FORCE in text for text in plain.values())
    dev = spec / "env-dev.yaml"
    dev.write_text(dev.read_text() + "  flux:\n    sourceRef: {kind: GitRepository, name: platform}\n",
                   encoding="utf-8")
    first, second = render(spec, tmp_path / "gen").files, render(spec, tmp_path / "gen").files
    assert first == second
    assert FORCE in first["dev/localqueues.yaml"] and "dev/flux-kustomization.yaml" in first
    assert not any(FORCE in text for name, text in first.items() if name.startswith("prod/"))
    assert first["prod/localqueues.yaml"] == plain["prod/localqueues.yaml"]
