"""A platform of many teams builds completely and deterministically (the timing target is measured by the
benchmark, not asserted here)."""

from __future__ import annotations

from pathlib import Path

from kueueplan.emit.build import build

from ._support import load_yaml_docs, write_big_spec


def test_many_teams_build_every_object(tmp_path: Path) -> None:
    spec = write_big_spec(tmp_path / "spec", 300)
    result = build(spec, tmp_path / "gen")
    # per team: 2 namespaces, 1 ClusterQueue, 2 LocalQueues, 1 RayJob; plus 2 flavors and 1 priority
    assert result.objects == {"dev": 300 * 6 + 3, "prod": 300 * 6 + 3}
    queues = load_yaml_docs(tmp_path / "gen/prod/clusterqueues.yaml")
    assert [q["metadata"]["name"] for q in queues] == [f"team-{i:04d}" for i in range(300)]
    first = {p: p.read_bytes() for p in sorted((tmp_path / "gen").rglob("*.yaml"))}
    assert build(spec, tmp_path / "gen").changed == []
    assert first == {p: p.read_bytes() for p in sorted((tmp_path / "gen").rglob("*.yaml"))}
