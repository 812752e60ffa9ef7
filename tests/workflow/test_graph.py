"""`kueueplan graph`: the topology model and its Mermaid / DOT renderings."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.kube.objects import read_cluster
from kueueplan.report.graph import dot, mermaid
from kueueplan.workflow.graph import build_topology, focus
from kueueplan.workflow.manifests import load_documents


def _cq(name: str, cohort: str | None = None, gpus: str = "4", selector: dict | None = None) -> dict:
    spec: dict = {"namespaceSelector": {} if selector is None else selector,
                  "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
                                      "flavors": [{"name": "gpu", "resources": [
                                          {"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]}]}
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def test_tutorial_topology_has_cohort_quotas_queues_and_namespaces(preemption_dir: Path) -> None:
    topo = build_topology(read_cluster(load_documents([preemption_dir])))
    [cohort] = topo.groups
    assert cohort.title == "Cohort team-ab"
    assert sorted(topo.nodes[m].title for m in cohort.members) == [
        "ClusterQueue shared-cq", "ClusterQueue team-a-cq", "ClusterQueue team-b-cq"]
    labels = {(e.source, e.target): e.label for e in topo.edges}
    assert labels[("cq_team_a_cq", "flavor_gpu_flavor")] == "nvidia.com/gpu 4"
    assert labels[("cq_team_b_cq", "flavor_gpu_flavor")] == "nvidia.com/gpu 0 (borrow ≤ 4)"
    assert labels[("cq_shared_cq", "flavor_default_flavor")] == "cpu 20, memory 64Gi"
    assert ("ns_team_a", "lq_team_a_local_queue") in labels
    assert ("lq_team_a_local_queue", "cq_team_a_cq") in labels
    # team-a-cq's selector picks namespace team-a only; shared-cq's `{}` selects all (shown on the node).
    assert labels[("cq_team_a_cq", "ns_team_a")] == "selects"
    assert ("cq_team_a_cq", "ns_team_b") not in labels
    assert "namespaces: all" in topo.nodes["cq_shared_cq"].lines


def test_mermaid_nests_cohort_tree_and_highlights_changes() -> None:
    docs = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "root"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": "research"},
         "spec": {"parentName": "root"}},
        _cq("vision", cohort="research"),
        _cq("infra", cohort="root"),
    ]
    topo = build_topology(read_cluster(docs), changed={"vision": ["nvidia.com/gpu on gpu: nominal 8 → 4"]})
    text = mermaid(topo)
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    root = lines.index('  subgraph cohort_root["<b>Cohort root</b>"]')
    child = next(i for i, l in enumerate(lines) if l.strip().startswith("subgraph cohort_research"))
    vision = next(i for i, l in enumerate(lines) if l.strip().startswith("cq_vision["))
    child_end = next(i for i in range(vision, len(lines)) if lines[i] == "    end")
    assert root < child < vision < child_end  # vision sits inside research, which sits inside root
    assert "nominal 8 → 4" in lines[vision]
    assert "  class cq_vision changed" in lines
    highlighted = re.search(r"linkStyle ([\d,]+) ", text).group(1).split(",")
    edges = [l for l in lines if "-->" in l or "-.->" in l]
    assert [edges[int(i)] for i in highlighted] == ['  cq_vision -->|"nvidia.com/gpu 4"| flavor_gpu']


def test_names_that_sanitise_alike_get_distinct_ids_and_labels_are_escaped() -> None:
    docs = [_cq("a.b"), _cq("a-b"), {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                                      "metadata": {"name": "gpu"}}]
    topo = build_topology(read_cluster(docs))
    cq_ids = [n.id for n in topo.nodes.values() if n.kind == "ClusterQueue"]
    assert len(set(cq_ids)) == 2
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", i) for i in topo.nodes)
    topo.nodes[cq_ids[0]].lines.append('say "hi" <script>')
    out = mermaid(topo)
    assert "<script>" not in out and "#quot;hi#quot;" in out
    assert '\\"hi\\"' in dot(topo)


def test_dot_is_balanced_and_marks_missing_queue(tmp_path: Path, write_yaml) -> None:
    write_yaml(tmp_path / "m.yaml", _cq("team", cohort="c"),
               {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                "metadata": {"name": "q", "namespace": "ns"}, "spec": {"clusterQueue": "missing"}})
    text = dot(build_topology(read_cluster(load_documents([tmp_path]))))
    assert text.startswith("digraph kueue {") and text.count("{") == text.count("}")
    assert "subgraph cluster_cohort_c" in text
    assert "ClusterQueue missing not defined" in text
    assert "ResourceFlavor gpu\\n(not defined)" in text


def test_selector_mismatch_is_drawn_as_blocked(tmp_path: Path, write_yaml) -> None:
    write_yaml(tmp_path / "m.yaml", _cq("team", selector={"matchLabels": {"team": "x"}}),
               {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}},
               {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
                "metadata": {"name": "q", "namespace": "other"}, "spec": {"clusterQueue": "team"}})
    topo = build_topology(read_cluster(load_documents([tmp_path])))
    [edge] = [e for e in topo.edges if e.source == "lq_other_q"]
    assert edge.dotted and edge.label == "namespace not selected"


def test_cli_graph_both_formats(preemption_dir: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["graph", str(preemption_dir)])
    assert out.exit_code == 0, out.output
    assert out.output.startswith("flowchart LR") and "cq_team_a_cq" in out.output
    out = runner.invoke(main, ["graph", str(preemption_dir), "-f", "dot"])
    assert out.exit_code == 0 and out.output.startswith("digraph kueue {")


def test_cli_graph_bad_input_is_a_clean_error(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("kind: ClusterQueue\napiVersion: kueue.x-k8s.io/v1beta2\nmetadata: {}\n")
    out = CliRunner().invoke(main, ["graph", str(tmp_path)])
    assert out.exit_code == 2
    assert "bad.yaml:1" in out.output and "Traceback" not in out.output


def test_graph_of_a_spec_folder_compiles_the_chosen_environment(repo_dir: Path, tmp_path: Path) -> None:
    spec = repo_dir / "environments"
    runner = CliRunner()
    several = runner.invoke(main, ["graph", str(spec)])
    assert several.exit_code == 2 and "--env" in several.output
    out = runner.invoke(main, ["graph", str(spec), "--env", "prod"])
    assert out.exit_code == 0, out.output
    assert runner.invoke(main, ["build", str(spec), "-o", str(tmp_path / "gen"), "-q"]).exit_code == 0
    rendered = runner.invoke(main, ["graph", str(tmp_path / "gen" / "prod")])
    # The spec compiled in memory draws the same topology as its rendered manifests.
    assert out.output == rendered.output
    assert "subgraph cohort_" in out.output and "-->|" in out.output


def test_focus_keeps_the_changed_cohort_tree_and_drops_the_rest() -> None:
    docs = [_cq("a1", cohort="a"), _cq("a2", cohort="a"), _cq("b1", cohort="b"), _cq("solo"),
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
             "metadata": {"name": "q", "namespace": "ns-b"}, "spec": {"clusterQueue": "b1"}},
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
             "metadata": {"name": "q", "namespace": "ns-a"}, "spec": {"clusterQueue": "a2"}}]
    cluster = read_cluster(docs)
    part = focus(cluster, {"a1"})
    assert sorted(part.cluster_queues) == ["a1", "a2"]
    assert list(part.local_queues) == [("ns-a", "q")]
    assert focus(cluster, {"a1"}, limit=1).cluster_queues.keys() == {"a1"}
    assert sorted(focus(cluster, {"solo", "b1"}).cluster_queues) == ["b1", "solo"]


PLATFORMS = Path(__file__).resolve().parents[1] / "validate" / "platforms"


def test_multikueue_check_config_and_workers_behind_the_queue() -> None:
    topo = build_topology(read_cluster(load_documents([PLATFORMS / "multikueue"])))
    labels = {(e.source, e.target): e.label for e in topo.edges}
    assert labels[("cq_cluster_queue", "ac_sample_multikueue")] == ""  # every flavor: no onFlavors label
    assert labels[("ac_sample_multikueue", "mkconfig_multikueue_config")] == "parameters"
    assert ("mkconfig_multikueue_config", "mkcluster_worker_eu") in labels
    assert ("mkconfig_multikueue_config", "mkcluster_worker_us") in labels
    assert topo.nodes["ac_sample_multikueue"].lines == ["controller: kueue.x-k8s.io/multikueue"]
    assert topo.nodes["mkcluster_worker_eu"].lines == ["kubeconfig: Secret worker-eu-secret"]
    text = mermaid(topo)
    assert 'ac_sample_multikueue{"<b>AdmissionCheck sample-multikueue</b>' in text
    assert 'mkcluster_worker_us[("<b>MultiKueueCluster worker-us</b>' in text
    assert "mkcluster_worker_us [label=\"MultiKueueCluster worker-us\\nkubeconfig: Secret worker-us-secret\", " \
           "shape=cylinder];" in dot(topo)


def test_topology_behind_a_tas_flavor() -> None:
    topo = build_topology(read_cluster(load_documents([PLATFORMS / "tas"])))
    edges = {(e.source, e.target): e.label for e in topo.edges}
    assert edges[("flavor_h100_tas", "topology_gpu_topology")] == "topologyName"
    assert not any(s == "flavor_cpu_pool" and t.startswith("topology_") for s, t in edges)
    assert topo.nodes["topology_gpu_topology"].lines == [
        "cloud.provider.com/topology-block > cloud.provider.com/topology-rack > kubernetes.io/hostname"]
    assert 'topology_gpu_topology>"<b>Topology gpu-topology</b>' in mermaid(topo)
    assert "shape=tab" in dot(topo)


def test_on_flavors_and_missing_references_are_drawn() -> None:
    cq = _cq("gpu")
    cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [
        {"name": "dws", "onFlavors": ["gpu", "spot"]}, {"name": "ghost"}]}
    docs = [cq,
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": "dws"},
             "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                      "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig",
                                     "name": "dws-config"}}},
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ProvisioningRequestConfig",
             "metadata": {"name": "dws-config"}, "spec": {"provisioningClassName": "queued-provisioning.gke.io"}},
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
             "spec": {"nodeLabels": {"pool": "a"}, "topologyName": "absent"}},
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueConfig", "metadata": {"name": "mk"},
             "spec": {"clusters": ["nowhere"]}}]
    topo = build_topology(read_cluster(docs))
    edges = {(e.source, e.target): e.label for e in topo.edges}
    assert edges[("cq_gpu", "ac_dws")] == "onFlavors: gpu, spot"
    assert edges[("ac_dws", "provconfig_dws_config")] == "parameters"
    assert topo.nodes["provconfig_dws_config"].lines == ["class: queued-provisioning.gke.io"]
    for node_id in ("ac_ghost", "topology_absent", "mkcluster_nowhere"):
        assert topo.nodes[node_id].lines == ["(not defined)"], node_id
    assert edges[("flavor_gpu", "topology_absent")] == "topologyName"


def test_hostile_names_of_checks_and_topologies_are_escaped() -> None:
    evil = 'x"]\n```\n@team <b>'
    cq = _cq("q")
    cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": evil, "onFlavors": [evil]}]}
    docs = [cq, {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "gpu"},
                 "spec": {"topologyName": evil}},
            {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": evil},
             "spec": {"levels": [{"nodeLabel": evil}]}}]
    topo = build_topology(read_cluster(docs))
    text, graph = mermaid(topo), dot(topo)
    assert "```" not in text and "\n@team" not in text and "<b>x" not in text
    assert all(re.fullmatch(r"[A-Za-z0-9_]+", n) for n in topo.nodes)
    assert graph.count("{") == graph.count("}") and '\\"]' in graph and "\n```" not in graph


def test_focus_keeps_checks_topologies_and_multikueue_behind_the_changed_queue() -> None:
    docs = load_documents([PLATFORMS / "multikueue"]) + load_documents([PLATFORMS / "tas"])
    cluster = read_cluster(docs)
    part = focus(cluster, {"cluster-queue"})
    assert list(part.admission_checks) == ["sample-multikueue"]
    kinds = sorted((d["kind"], d["metadata"]["name"]) for d in part.other)
    assert kinds == [("MultiKueueCluster", "worker-eu"), ("MultiKueueCluster", "worker-us"),
                     ("MultiKueueConfig", "multikueue-config")]
    tas = focus(cluster, {"gpu-tas"})
    assert [(d["kind"], d["metadata"]["name"]) for d in tas.other] == [("Topology", "gpu-topology")]
    assert "topology_gpu_topology" in build_topology(tas).nodes


def test_v1beta1_multikueue_cluster_kubeconfig() -> None:
    docs = [{"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "MultiKueueConfig", "metadata": {"name": "mk"},
             "spec": {"clusters": ["w1"]}},
            {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "MultiKueueCluster", "metadata": {"name": "w1"},
             "spec": {"kubeConfig": {"locationType": "Path", "location": "/etc/w1.kubeconfig"}}}]
    topo = build_topology(read_cluster(docs))
    assert topo.nodes["mkcluster_w1"].lines == ["kubeconfig: Path /etc/w1.kubeconfig"]
    assert ("mkconfig_mk", "mkcluster_w1") in {(e.source, e.target) for e in topo.edges}


def test_node_ids_of_many_names_alike_are_unique_and_linear() -> None:
    """20,000 flavors named a-.-.z, a.-.-z, ... sanitise to one base: ids stay unique, and allocating them is
    linear (it probed every earlier suffix again: 80 s for `graph` on such a file, 2 s now)."""
    import itertools
    import time

    from kueueplan.workflow.graph import _Ids

    names = ["a" + "".join(bits) + "z" for bits in itertools.islice(itertools.product("-.", repeat=15), 20_000)]
    ids = _Ids()
    ids("flavor", "a_z")  # a name that is its own sanitised form stays itself
    started = time.process_time()
    made = [ids("flavor", n) for n in names]
    assert time.process_time() - started < 3
    assert len(set(made)) == len(names) and "flavor_a_z" not in made
    assert ids("flavor", names[7]) == made[7] and ids("flavor", "a_z") == "flavor_a_z"
