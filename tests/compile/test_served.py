"""Build refuses fields and kinds that the environment's Kueue release does not serve, at the spec line that set them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kueueplan.compile import compile_platform
from kueueplan.compile.served import FIELDS, KINDS
from kueueplan.errors import KueueplanError

from .test_teams import HEAD, _team, _write

CRD_FILES = {"ClusterQueue": "clusterqueues", "LocalQueue": "localqueues", "ResourceFlavor": "resourceflavors",
             "ProvisioningRequestConfig": "provisioningrequestconfigs", "Cohort": "cohorts",
             "WorkloadPriorityClass": "workloadpriorityclasses", "AdmissionCheck": "admissionchecks",
             "Topology": "topologies", "MultiKueueCluster": "multikueueclusters",
             "MultiKueueConfig": "multikueueconfigs"}


def _has(schema: dict[str, Any], path: tuple[str, ...]) -> bool:
    for step in path:
        schema = schema["items"] if step == "*" else (schema.get("properties") or {}).get(step)
        if schema is None:
            return False
    return True


@pytest.mark.parametrize("kind", sorted(set(FIELDS) | set(KINDS)))
def test_every_listed_field_is_in_todays_crd(kind: str, shared_dir: Path) -> None:
    """The table names real fields: each is served by the current CRD's v1beta1 schema, the one the versions
    were read from (v1beta2 renamed some, e.g. admissionChecks became admissionChecksStrategy only)."""
    crd = yaml.safe_load((shared_dir / "upstream/kueue/crds" / f"kueue.x-k8s.io_{CRD_FILES[kind]}.yaml").read_text())
    assert crd["spec"]["names"]["kind"] == kind
    v1beta1 = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta1")["schema"]["openAPIV3Schema"]
    for path, _, _ in FIELDS.get(kind, ()):
        assert _has(v1beta1["properties"]["spec"], path), (kind, path)


def _error(spec: Path) -> KueueplanError:
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    return info.value


@pytest.mark.parametrize("body, older, newer, field, line", [
    ("  fairSharing: {weight: 2}\n", "v0.6.3", "v0.7.0", "ClusterQueue spec.fairSharing", 8),
    ("  stopPolicy: Hold\n", "v0.5.3", "v0.6.0", "ClusterQueue spec.stopPolicy", 8),
    ("  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, "
     "preference: PreemptionOverBorrowing}\n", "v0.14.4", "v0.15.0", "ClusterQueue spec.flavorFungibility.preference", 8),
    ("  localQueues: [{name: main, stopPolicy: Hold}]\n", "v0.7.1", "v0.8.0", "LocalQueue spec.stopPolicy", 8),
    ("  localQueues: [{name: main, fairSharing: {weight: 2}}]\n", "v0.11.9", "v0.12.0", "LocalQueue spec.fairSharing", 8),
])
def test_team_fields_need_their_kueue_release(tmp_path: Path, body: str, older: str, newer: str, field: str,
                                              line: int) -> None:
    spec = _write(tmp_path, _team("ml", body), f"{{kueueVersion: {older}}}")
    err = _error(spec)
    since = ".".join(newer.split(".")[:2])
    assert f"{field} needs Kueue {since} or newer" in err.message and f"runs Kueue {older}" in err.message
    assert (Path(err.file).name, err.line) == ("teams.yaml", line)
    assert "overlays" in (err.hint or "")
    (spec / "env.yaml").write_text((spec / "env.yaml").read_text().replace(older, newer))
    assert compile_platform(spec)["dev"]


def test_lending_limit_points_at_the_quotas(tmp_path: Path) -> None:
    team = _team("ml").replace("resources: {cpu: 4}", "resources: {cpu: {nominalQuota: 4, lendingLimit: 2}}")
    spec = _write(tmp_path, team + "  cohort: org\n", "{kueueVersion: v0.5.3}")
    err = _error(spec)
    assert "lendingLimit needs Kueue v0.6" in err.message and (Path(err.file).name, err.line) == ("teams.yaml", 5)


def test_an_overlay_can_drop_the_field_for_an_older_environment(tmp_path: Path) -> None:
    spec = _write(tmp_path, _team("ml", "  fairSharing: {weight: 2}\n"),
                  "{kueueVersion: v0.6.3, overlays: {Team: {ml: {fairSharing: null}}}}")
    cq = next(m for m in compile_platform(spec)["dev"] if m["kind"] == "ClusterQueue")
    assert "fairSharing" not in cq["spec"]


def test_kinds_newer_than_the_release(tmp_path: Path) -> None:
    spec = _write(tmp_path, _team("ml"), "{kueueVersion: v0.4.2}")  # BASE declares two Priority documents
    err = _error(spec)
    assert "WorkloadPriorityClass needs Kueue v0.5" in err.message and Path(err.file).name == "base.yaml"


def test_provisioning_retry_strategy_needs_0_9(tmp_path: Path) -> None:
    check = HEAD + ("kind: AdmissionCheck\nmetadata: {name: prov}\nspec:\n  provisioningRequest:\n"
                    "    provisioningClassName: queued-provisioning.gke.io\n    retryStrategy: {backoffLimitCount: 2}\n")
    spec = _write(tmp_path, _team("ml") + "---\n" + check, "{kueueVersion: v0.8.2}")
    err = _error(spec)
    assert "ProvisioningRequestConfig spec.retryStrategy needs Kueue v0.9" in err.message
    assert (Path(err.file).name, err.line) == ("teams.yaml", 15)
