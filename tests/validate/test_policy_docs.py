"""docs/policies.md's "the same policy, both ways": the VAP and the PlatformPolicy knob both refuse the Job."""

from __future__ import annotations

import re
from pathlib import Path

from kueueplan.validate import validate

DOC = Path(__file__).resolve().parents[2] / "docs" / "policies.md"


def _example(name: str) -> str:
    m = re.search(rf"<!-- example: {name} -->\n```yaml\n(.*?)\n```", DOC.read_text(), re.S)
    assert m, f"example {name} missing from {DOC}"
    return m.group(1) + "\n"


def _rules_on_job(tmp_path: Path, *names: str) -> set[str]:
    folder = tmp_path / "-".join(names)
    folder.mkdir()
    for name in names:
        (folder / f"{name}.yaml").write_text(_example(name))
    result = validate([str(folder)], crds=None, policies=[])
    return {f.rule for f in result.findings if f.object == "Job/team-a/no-queue" and f.severity == "error"}


def test_the_same_policy_both_ways(tmp_path: Path) -> None:
    assert _rules_on_job(tmp_path, "vap", "workload") == {"KP610"}
    assert _rules_on_job(tmp_path, "platformpolicy", "workload") == {"KP620"}
    assert _rules_on_job(tmp_path, "workload") == set()
