"""The schema pack: validate applies the release CRDs' schemas and CEL rules with no --crds and no network,
per release, and the pack is what scripts/schema-pack derives from the release CRDs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kueueplan.validate import schemapack, validate

CQ_FLAVOR_MISSES_A_RESOURCE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team-a
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 9
"""

CQ_V1BETA1_FAIR_SHARING = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a
spec:
  namespaceSelector: {}
  fairSharing:
    weight: 2
"""

RAYJOB_BACKOFF = """\
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: job
spec:
  entrypoint: python -c "print(1)"
  backoffLimit: 2
  shutdownAfterJobFinishes: true
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.9.0
"""


def _write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "in.yaml"
    path.write_text(text)
    return str(path)


def _rules(result) -> set[str]:
    return {f.rule for f in result.findings}


def test_cel_rule_applies_with_no_crds_given(tmp_path: Path) -> None:
    # Before the pack, no --crds meant no schema and no CEL check at all: this ClusterQueue passed.
    result = validate([_write(tmp_path, CQ_FLAVOR_MISSES_A_RESOURCE)], policies=[])
    cel = [f for f in result.findings if f.rule == "KP204"]
    assert cel and "flavors must have the same number of resources as the coveredResources" in cel[0].message
    assert result.crd_sources == [f"schema pack: Kueue {schemapack.newest('kueue')}"]
    assert result.schema_skipped == {} and result.without_crd == []


def test_openapi_schema_applies_with_no_crds_given(tmp_path: Path) -> None:
    text = CQ_FLAVOR_MISSES_A_RESOURCE.replace("  namespaceSelector: {}\n", "  queueingStrategy: FIFO\n")
    findings = validate([_write(tmp_path, text)], policies=[]).findings
    assert any(f.rule == "KP201" and "queueingStrategy" in f.message and "StrictFIFO" in f.message
               for f in findings)


def test_a_field_newer_than_the_kueue_release_is_refused(tmp_path: Path) -> None:
    # ClusterQueue.spec.fairSharing exists from Kueue v0.7 (config/components/crd/bases at each tag).
    path = _write(tmp_path, CQ_V1BETA1_FAIR_SHARING)
    old = validate([path], policies=[], kueue_version="v0.6")
    assert any(f.rule == "KP202" and "fairSharing" in f.message for f in old.findings)
    assert old.crd_sources == ["schema pack: Kueue v0.6.3"]
    new = validate([path], policies=[], kueue_version="v0.7.0")
    assert "KP202" not in _rules(new) and new.crd_sources == ["schema pack: Kueue v0.7.1"]


def test_v1beta2_is_not_served_before_kueue_0_15(tmp_path: Path) -> None:
    path = _write(tmp_path, CQ_FLAVOR_MISSES_A_RESOURCE)
    assert "KP206" in _rules(validate([path], policies=[], kueue_version="v0.14"))
    assert "KP206" not in _rules(validate([path], policies=[], kueue_version="v0.15"))


def test_kuberay_version_picks_the_rayjob_schema(tmp_path: Path) -> None:
    path = _write(tmp_path, RAYJOB_BACKOFF)
    old = validate([path], policies=[], kuberay_version="v1.0")
    assert any(f.rule == "KP202" and "backoffLimit" in f.message for f in old.findings)
    assert "KP202" not in _rules(validate([path], policies=[]))  # default: the newest KubeRay


def test_a_release_outside_the_pack_is_skipped_and_said(tmp_path: Path) -> None:
    result = validate([_write(tmp_path, CQ_FLAVOR_MISSES_A_RESOURCE)], policies=[], kueue_version="v0.99")
    assert "KP204" not in _rules(result)
    why = result.schema_skipped["ClusterQueue.kueue.x-k8s.io"]
    assert "v0.99" in why and "schemas pull --kueue v0.99.0" in why


def test_crds_given_override_the_pack(tmp_path: Path) -> None:
    crd = tmp_path / "crd.yaml"
    doc = json.loads(json.dumps(schemapack.crd_documents("kueue", "v0.19.2")["ClusterQueue.kueue.x-k8s.io"]))
    for version in doc["spec"]["versions"]:
        version["schema"]["openAPIV3Schema"]["properties"]["spec"] = {"type": "object",
                                                                      "x-kubernetes-preserve-unknown-fields": True}
    crd.write_text(json.dumps(doc))
    result = validate([_write(tmp_path, CQ_FLAVOR_MISSES_A_RESOURCE)], crds=[str(crd)], policies=[])
    assert "KP204" not in _rules(result) and result.crd_sources == [str(crd)]


def test_the_environment_release_is_used(tmp_path: Path, repo_dir: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(repo_dir / "environments", spec)
    result = validate([str(spec)], policies=[])
    # env-dev runs Kueue v0.14.4 (pack release v0.14.8), env-prod v0.19.2
    assert {"schema pack: Kueue v0.14.8", "schema pack: Kueue v0.19.2"} <= set(result.crd_sources)


# --------------------------------------------------------------------------- the pack itself

def test_pack_covers_every_supported_minor() -> None:
    # compile.served reads Kueue v0.4 to v0.19; every minor has its newest patch in the pack
    minors = [schemapack.release_key(t)[:2] for t in schemapack.releases("kueue")]
    assert minors == [(0, m) for m in range(4, 20)]
    assert [schemapack.release_key(t)[:2] for t in schemapack.releases("kuberay")] == [(1, m) for m in range(8)]


def test_pack_is_small() -> None:
    assert schemapack.PACK_PATH.stat().st_size < 300_000


def test_strip_keeps_constraints_and_properties_named_description() -> None:
    schema = {"type": "object", "description": "prose", "required": ["description"],
              "properties": {"description": {"type": "string", "description": "x", "maxLength": 5},
                             "n": {"type": "integer", "minimum": 1, "default": 1, "example": 3,
                                   "x-kubernetes-validations": [{"rule": "self > 0", "message": "m"}]}},
              "x-kubernetes-preserve-unknown-fields": True}
    assert schemapack.strip_schema(schema) == {
        "type": "object", "required": ["description"],
        "properties": {"description": {"type": "string", "maxLength": 5},
                       "n": {"type": "integer", "minimum": 1, "default": 1,
                             "x-kubernetes-validations": [{"rule": "self > 0", "message": "m"}]}},
        "x-kubernetes-preserve-unknown-fields": True}


def test_derive_is_deterministic_and_shares_nodes(tmp_path: Path) -> None:
    # Two releases with the same CRD store its nodes once; the bytes do not depend on the run.
    doc = schemapack.crd_documents("kueue", "v0.19.2")["ResourceFlavor.kueue.x-k8s.io"]
    for tag in ("v0.19.1", "v0.19.2"):
        (tmp_path / "kueue" / tag).mkdir(parents=True)
        (tmp_path / "kueue" / tag / "rf.yaml").write_text(json.dumps(doc))
    one, two = schemapack.derive(tmp_path), schemapack.derive(tmp_path)
    assert schemapack.encode(one) == schemapack.encode(two)
    releases = one["releases"]["kueue"]
    assert releases["v0.19.1"]["crds"] == releases["v0.19.2"]["crds"]
    single = schemapack.derive(tmp_path, {"kueue": ["v0.19.2"]})
    assert single["nodes"] == one["nodes"]


def test_pack_matches_the_upstream_release_crds(shared_dir: Path) -> None:
    """Staleness: the newest pack releases are exactly what the tool derives from ../shared's release CRDs."""
    for project, folder in (("kueue", "kueue/crds"), ("kuberay", "kuberay/crds"), ("autoscaler", "autoscaler/crds")):
        files, docs = schemapack.read_release(shared_dir / "upstream" / folder)
        release = schemapack.newest(project)
        packed = schemapack.crd_documents(project, release)
        pinned = schemapack.pinned_files(project, release)
        assert files and all(pinned[name] == digest for name, digest in files.items()), (project, release)
        for doc in docs:
            stripped = schemapack.strip_crd(doc)
            name = f"{stripped['spec']['names']['kind']}.{stripped['spec']['group']}"
            assert packed[name] == stripped, name


def test_a_kind_newer_than_the_release_is_refused(tmp_path: Path) -> None:
    # Cohort objects exist from Kueue v0.9 (kueue.x-k8s.io_cohorts.yaml appears at that tag).
    path = _write(tmp_path, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: research\n")
    old = validate([path], policies=[], kueue_version="v0.8.2")
    assert [(f.rule, f.line) for f in old.findings if f.severity != "info"] == [("KP318", 2)]
    assert "Kueue v0.8.4 has no Cohort CRD" in old.findings[-1].message
    assert old.schema_skipped == {"Cohort.kueue.x-k8s.io": "Kueue v0.8.4 has no Cohort CRD"}
    assert not [f for f in validate([path], policies=[], kueue_version="v0.13").findings]


def test_provisioning_request_is_checked_and_other_autoscaler_kinds_are_not_refused(tmp_path: Path) -> None:
    text = ("apiVersion: autoscaling.x-k8s.io/v1\nkind: ProvisioningRequest\nmetadata:\n  name: pr\n"
            "spec:\n  provisioningClassName: check-capacity.autoscaling.x-k8s.io\n  podSets: []\n")
    result = validate([_write(tmp_path, text)], policies=[])
    assert "KP201" in _rules(result)  # podSets needs at least one item (minItems: 1)
    assert "schema pack: Cluster Autoscaler v1.36.1" in result.crd_sources
    buffer = "apiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\nmetadata:\n  name: b\n"
    result = validate([_write(tmp_path, buffer)], policies=[])
    assert "KP318" not in _rules(result) and result.schema_skipped == {}
    assert result.without_crd == ["CapacityBuffer.autoscaling.x-k8s.io"]


def test_wheels_ship_the_pack(repo_dir: Path) -> None:
    """The Action installs kueueplan as a wheel (`pip install $ACTION_PATH`): package data must include the pack."""
    import fnmatch
    import tomllib

    data = tomllib.loads((repo_dir / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    rel = schemapack.PACK_PATH.relative_to(repo_dir / "src" / "kueueplan").as_posix()
    assert any(fnmatch.fnmatchcase(rel, pattern) for pattern in data["kueueplan"]), data


def test_every_packed_crd_fits_the_cel_cost_budget() -> None:
    """validate refuses CRDs whose CEL rules exceed the cost budget (exit 2): no shipped release may."""
    from kueueplan.validate.celcost import check_schema

    checked = 0
    for project in schemapack.PROJECTS:
        for release in schemapack.releases(project):
            for name, doc in schemapack.crd_documents(project, release).items():
                for version in doc["spec"]["versions"]:
                    check_schema(version["schema"]["openAPIV3Schema"], f"{name}@{release} ")
                    checked += 1
    assert checked > 250
