"""Findings on a spec folder point at the spec line that wrote the field, in the environment's overlay when
the overlay set it (not at the start of the document)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kueueplan.compile.origin import ByFlavor, spec_paths
from kueueplan.spec.load import load_spec
from kueueplan.validate import validate

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "policies" / "platform.yaml"
SPEC = REPO / "environments"

pytestmark = pytest.mark.skipif(not SPEC.is_dir(), reason="the demo spec environments/ is not in this checkout")


def _line(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _kp608(spec: Path) -> list[tuple[str, int | None, str]]:
    findings = validate([str(spec)], crds=None, policies=[str(POLICY)]).findings
    return sorted((Path(f.file).name, f.line, f.object) for f in findings if f.rule == "KP608")


def test_a_base_quota_and_an_overlay_quota_are_found_where_they_are_written(tmp_path: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(SPEC, spec)
    teams = spec / "teams.yaml"
    text = teams.read_text()
    assert text.count("borrowingLimit: 16\n") == 1  # team-b's cpu (its policy caps it at 16)
    teams.write_text(text.replace("borrowingLimit: 16\n", "borrowingLimit: 40\n"))
    line = _line(teams, "borrowingLimit: 40")
    assert _kp608(spec) == [("teams.yaml", line, "ClusterQueue/team-b@dev"), ("teams.yaml", line, "ClusterQueue/team-b@prod")]

    prod = spec / "env-prod.yaml"
    prod.write_text(prod.read_text().replace("  simulation:\n", "      team-b:\n        quotas:\n"
                                             "        - flavor: cpu-standard\n          resources:\n"
                                             "            cpu: {nominalQuota: 16, borrowingLimit: 48}\n"
                                             "  simulation:\n", 1))
    assert _kp608(spec) == [("env-prod.yaml", _line(prod, "borrowingLimit: 48"), "ClusterQueue/team-b@prod"),
                            ("teams.yaml", line, "ClusterQueue/team-b@dev")]


def test_quota_items_are_found_by_flavor_when_an_overlay_drops_one(tmp_path: Path) -> None:
    """dev's overlay removes team-a's gpu-h100 quota: the compiled groups' indexes no longer match the file's."""
    platform = load_spec(SPEC)
    team_a = next(e for e in platform.resolve("dev")["Team"] if e.name == "team-a")
    assert [q.flavor for q in team_a.model.spec.quotas] != [q["flavor"] for q in team_a.doc.data["spec"]["quotas"]]
    cq = {"kind": "ClusterQueue", "spec": {"resourceGroups": [{"flavors": [
        {"name": "cpu-standard", "resources": [{"name": "cpu", "nominalQuota": "1"}]}]}]}}
    path = ("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuota")
    assert spec_paths(cq, path) == (("quotas", ByFlavor("cpu-standard"), "resources", "cpu", "nominalQuota"),)
    file, line = team_a.locate(spec_paths(cq, path))
    written = Path(file).read_text().splitlines()
    assert Path(file).name == "teams.yaml" and "cpu" in written[line - 1]
    item = next(i for i, q in enumerate(team_a.doc.data["spec"]["quotas"]) if q["flavor"] == "cpu-standard")
    assert line == team_a.doc.line_of(("spec", "quotas", item, "resources", "cpu"))


def test_paths_outside_the_quotas() -> None:
    cq = {"kind": "ClusterQueue", "spec": {}}
    assert spec_paths(cq, ("spec", "namespaceSelector", "matchLabels")) == (("namespaceSelector", "matchLabels"),
                                                                             ("namespaces",))
    assert spec_paths(cq, ("spec", "cohortName")) == (("cohort",),)
    assert spec_paths(cq, ("spec", "preemption", "borrowWithinCohort")) == (("preemption", "borrowWithinCohort"),)
    assert spec_paths(cq, ("metadata", "name")) == ((),)
    assert spec_paths({"kind": "LocalQueue"}, ("spec", "clusterQueue")) == (("localQueues",),)
    assert spec_paths({"kind": "RayJob"}, ("spec", "entrypoint")) == ((),)


def test_a_clusterqueues_entrys_fields_are_found_in_the_entry_or_the_team(tmp_path: Path) -> None:
    """A ClusterQueue from a `clusterQueues` entry: a field the entry sets points at the entry, one it takes from
    the team at the team's field, an overlay's change at the overlay."""
    from kueueplan.validate.specinput import compiled_objects

    head = "apiVersion: kueueplan.io/v1alpha1\n"
    (tmp_path / "f.yaml").write_text(head + "kind: ResourceFlavor\nmetadata: {name: cpu}\n")
    (tmp_path / "t.yaml").write_text(
        head + "kind: Team\nmetadata: {name: ml}\nspec:\n  cohort: org\n"
        "  quotas: [{flavor: cpu, resources: {cpu: 4}}]\n"          # line 6
        "  clusterQueues:\n  - name: ml-prod\n  - name: ml-dev\n"
        "    quotas: [{flavor: cpu, resources: {cpu: 2}}]\n")        # line 10
    (tmp_path / "e.yaml").write_text(
        head + "kind: Environment\nmetadata: {name: e}\nspec:\n  overlays:\n    Team:\n      ml:\n"
        "        clusterQueues:\n        - name: ml-prod\n          cohort: other\n")  # line 10
    objs = {o.name: o for o in compiled_objects(tmp_path) if o.kind == "ClusterQueue"}
    quota = ("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuota")
    assert [(Path(f).name, line) for f, line in (objs["ml-prod"].origin(quota), objs["ml-dev"].origin(quota))] == \
        [("t.yaml", 6), ("t.yaml", 10)]
    cohort = objs["ml-prod"].origin(("spec", "cohortName"))
    assert (Path(cohort[0]).name, cohort[1]) == ("e.yaml", 10)
    cohort = objs["ml-dev"].origin(("spec", "cohortName"))
    assert (Path(cohort[0]).name, cohort[1]) == ("t.yaml", 5)
