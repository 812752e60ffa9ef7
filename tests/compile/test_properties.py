"""Property: whatever quotas a team declares, the ClusterQueue carries exactly them (in Kueue units), in the
declared flavor order, canonically written, and valid against the upstream CRD."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kueueplan.compile import compile_environment
from kueueplan.kube.objects import read_cluster
from kueueplan.kube.quantity import is_canonical, resource_value
from kueueplan.spec.load import load_spec

from ._support import crd_errors

FLAVORS = ["f-a", "f-b", "f-c", "f-d"]
GROUPS = [["cpu", "memory"], ["nvidia.com/gpu"], ["example.com/fpga", "ephemeral-storage"]]
quantity = st.one_of(
    st.integers(min_value=0, max_value=10**6),
    st.builds(lambda n, s: f"{n}{s}", st.integers(min_value=0, max_value=10**5),
              st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti"])),
    st.builds(lambda a, b: f"{a}.{b}", st.integers(0, 999), st.integers(0, 999)),
)


@st.composite
def teams(draw: st.DrawFn) -> list[tuple[str, dict[str, object]]]:
    flavors = draw(st.permutations(FLAVORS))[: draw(st.integers(1, 4))]
    group_of = {f: draw(st.integers(0, len(GROUPS) - 1)) for f in flavors}
    out = []
    for flavor in flavors:
        resources = {r: draw(quantity) for r in GROUPS[group_of[flavor]]}
        out.append((flavor, resources))
    return out


def _yaml_value(value: object) -> str:
    return str(value) if isinstance(value, int) else f'"{value}"'


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(quotas=teams(), v1beta1=st.booleans())
def test_quotas_survive_compilation(tmp_path_factory, shared_dir: Path, quotas, v1beta1: bool) -> None:
    folder = tmp_path_factory.mktemp("spec")
    head = "apiVersion: kueueplan.io/v1alpha1\n"
    docs = [head + f"kind: ResourceFlavor\nmetadata: {{name: {f}}}\n" for f in FLAVORS]
    lines = [head + "kind: Team\nmetadata: {name: t}\nspec:\n  quotas:"]
    # Beyond int64 (in millicores for cpu) Kueue saturates; such quotas are not what this property is about.
    assume(all(resource_value(r, v) < 2**62 for _, resources in quotas for r, v in resources.items()))
    for flavor, resources in quotas:
        body = ", ".join(f"{r}: {_yaml_value(v)}" for r, v in resources.items())
        lines.append(f"  - flavor: {flavor}\n    resources: {{{body}}}")
    docs.append("\n".join(lines) + "\n")
    version = "v0.12.0" if v1beta1 else "v0.19.2"
    docs.append(head + f"kind: Environment\nmetadata: {{name: e}}\nspec: {{kueueVersion: {version}}}\n")
    (folder / "spec.yaml").write_text("---\n".join(docs))

    manifests = compile_environment(load_spec(folder), "e")
    cq_manifest = next(m for m in manifests if m["kind"] == "ClusterQueue")
    assert crd_errors(shared_dir, cq_manifest) == []
    cq = read_cluster(manifests).cluster_queues["t"]
    declared_order = [f for f, _ in quotas]
    for group in cq.resource_groups:
        names = [fq.name for fq in group.flavors]
        assert names == sorted(names, key=declared_order.index), "flavor order within a group is kept"
    assert sorted(fq.name for group in cq.resource_groups for fq in group.flavors) == sorted(declared_order)
    got = {(fq.name, r.name): r.nominal_quota
           for group in cq.resource_groups for fq in group.flavors for r in fq.resources}
    want = {(f, r): resource_value(r, v) for f, resources in quotas for r, v in resources.items()}
    assert got == want
    for group in cq_manifest["spec"]["resourceGroups"]:
        for flavor in group["flavors"]:
            assert all(is_canonical(r["nominalQuota"]) for r in flavor["resources"])
