"""The models for several ClusterQueues per team, lend-only queues, Topology and MultiKueue: what they accept, what
they refuse (with the field path, file and line), and how an entry's fields combine with the team's."""

from __future__ import annotations

from pathlib import Path

import pytest

from kueueplan.errors import KueueplanError
from kueueplan.spec.load import load_spec, merge_patch
from kueueplan.spec.models import QUEUE_FIELDS, ClusterQueueEntry, TeamSpec

HEAD = "apiVersion: kueueplan.io/v1alpha1\n"
ENV = HEAD + "kind: Environment\nmetadata: {name: prod}\n"


def _load_error(tmp_path: Path, kind: str, spec: str) -> KueueplanError:
    (tmp_path / "env.yaml").write_text(ENV)
    (tmp_path / "doc.yaml").write_text(HEAD + f"kind: {kind}\nmetadata:\n  name: x\nspec:\n{spec}")
    with pytest.raises(KueueplanError) as info:
        load_spec(tmp_path)
    return info.value


def test_an_entry_replaces_only_the_fields_it_sets() -> None:
    team = TeamSpec.model_validate({
        "cohort": "org", "quotas": [{"flavor": "cpu", "resources": {"cpu": 4}}], "queueingStrategy": "StrictFIFO",
        "expect": {"admittedWithin": "5m"},
        "clusterQueues": [{"name": "prod"}, {"name": "dev", "quotas": [], "cohort": None, "lendOnly": True}]})
    prod, dev = team.queue_specs("ml")
    assert (prod.name, prod.cohort, len(prod.quotas), prod.queueingStrategy, prod.lendOnly) == \
        ("prod", "org", 1, "StrictFIFO", False)
    assert (dev.name, dev.cohort, dev.quotas, dev.queueingStrategy, dev.lendOnly) == ("dev", None, [], "StrictFIFO", True)
    assert prod.expect == dev.expect == team.expect
    assert not team.all_lend_only()
    assert [q.name for q in TeamSpec().queue_specs("ml")] == ["ml"]
    assert [q.name for q in TeamSpec(clusterQueue="q").queue_specs("ml")] == ["q"]
    assert TeamSpec(lendOnly=True).all_lend_only()
    # every queue field of the team can be set per entry, and nothing else
    assert set(QUEUE_FIELDS) == set(ClusterQueueEntry.model_fields) - {"name"}


@pytest.mark.parametrize("kind,spec,where,needle", [
    ("Team", "  clusterQueues:\n  - {name: a}\n  - {name: a}\n", "spec.clusterQueues", "must be distinct"),
    ("Team", "  clusterQueues: []\n", "spec.clusterQueues", "at least 1 item"),
    ("Team", "  clusterQueues:\n  - {name: a, priorities: [x]}\n", "spec.clusterQueues[0].priorities",
     "unknown field 'priorities'"),
    ("Team", "  clusterQueues:\n  - {cohort: org}\n", "spec.clusterQueues[0].name", "required field is missing"),
    ("Team", "  lendOnly: \"yes\"\n", "spec.lendOnly", "valid boolean"),
    ("Team", "  localQueues: [{name: q, clusterQueue: Not_A_Name}]\n", "spec.localQueues[0].clusterQueue",
     "not a valid name"),
    ("Topology", "  levels: [rack, rack]\n", "spec.levels", "must be unique"),
    ("Topology", "  levels: [\"not a label!\"]\n", "spec.levels[0].nodeLabel", "not a valid label key"),
    ("MultiKueueCluster", "  {}\n", "spec", "set 'kubeConfig' or 'clusterProfileRef'"),
    ("MultiKueueCluster", "  kubeConfig: {locationType: Configmap, location: x}\n",
     "spec.kubeConfig.locationType", "'Configmap' is not allowed"),
    ("AdmissionCheck", "  multiKueue: {clusters: [a]}\n  controllerName: other\n", "spec",
     "exactly one of 'provisioningRequest', 'multiKueue' or 'controllerName'"),
    ("AdmissionCheck", "  multiKueue: {clusters: [a, a]}\n", "spec.multiKueue.clusters", "listed twice"),
    ("AdmissionCheck", "  multiKueue: {clusters: []}\n", "spec.multiKueue.clusters", "at least 1 item"),
    ("AdmissionCheck", "  multiKueue: {clusters: [a]}\n  parameters: {apiGroup: g, kind: K, name: n}\n", "spec",
     "'parameters' is for a generic controller"),
])
def test_mistakes_name_the_field(tmp_path: Path, kind: str, spec: str, where: str, needle: str) -> None:
    err = _load_error(tmp_path, kind, spec)
    assert err.message.startswith(where + ":"), err.message
    assert needle in err.message
    assert Path(err.file).name == "doc.yaml" and err.line is not None and err.line >= 5


def test_overlay_merges_cluster_queues_by_name_and_their_quotas_by_flavor() -> None:
    base = {"clusterQueues": [{"name": "dev", "quotas": [{"flavor": "a", "resources": {"cpu": 1}},
                                                         {"flavor": "b", "resources": {"cpu": 2}}]},
                              {"name": "prod", "lendOnly": True}]}
    patch = {"clusterQueues": [{"name": "dev", "quotas": [{"flavor": "b", "resources": {"cpu": 5}}]},
                               {"name": "new"}]}
    assert merge_patch(base, patch) == {"clusterQueues": [
        {"name": "dev", "quotas": [{"flavor": "a", "resources": {"cpu": 1}}, {"flavor": "b", "resources": {"cpu": 5}}]},
        {"name": "prod", "lendOnly": True},
        {"name": "new"}]}


def test_a_pytorchjob_replica_type_spelled_as_in_its_crd_says_to_write_it_lower_case(tmp_path: Path) -> None:
    """pytorchReplicaSpecs keys are Master and Worker; the spec's replica names are lower case and build writes
    the key. The plain DNS-label error ('use lower-case letters') left the reader guessing what to write."""
    err = _load_error(tmp_path, "Workload", "  team: t\n  kind: PyTorchJob\n  replicas:\n  - name: Worker\n"
                                            "    image: pytorch/pytorch:2.3.0\n")
    assert err.file == str(tmp_path / "doc.yaml") and err.line == 9
    assert "spec.replicas[0].name: 'Worker': write the PyTorchJob replica type in lower case, 'worker'" in err.message
