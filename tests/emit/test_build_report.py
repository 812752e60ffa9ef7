"""`build` reports exactly the files whose text changed (it said 11 when 1 changed)."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from kueueplan.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_one_changed_quota_is_one_changed_file(tmp_path: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    out = tmp_path / "gen"
    first = CliRunner().invoke(main, ["build", str(spec), "-o", str(out)])
    assert first.exit_code == 0 and "file(s) changed" in first.output
    # prod only: dev's overlay sets team-a's gpu-a100 quota itself
    prod = spec / "env-prod.yaml"
    prod.write_text(prod.read_text().replace("  simulation:\n", "      team-b:\n        quotas:\n"
                                             "        - flavor: cpu-standard\n          resources:\n"
                                             "            cpu: {nominalQuota: 20}\n  simulation:\n", 1))
    before = {p: p.read_text() for p in out.rglob("*.yaml")}
    second = CliRunner().invoke(main, ["build", str(spec), "-o", str(out)])
    assert second.exit_code == 0, second.output
    differ = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.yaml") if before.get(p) != p.read_text())
    assert differ == ["prod/clusterqueues.yaml"]
    assert second.output.strip().splitlines()[-1] == "1 file(s) changed: prod/clusterqueues.yaml"
    third = CliRunner().invoke(main, ["build", str(spec), "-o", str(out)])
    assert third.output.strip().splitlines()[-1] == "up to date"
