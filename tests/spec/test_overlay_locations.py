"""Errors in a team's base document point at the base file and line even when an environment overlay also
touches the team's quotas (overlays merge quota lists by flavor, so list indexes differ)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.compile import compile_platform
from kueueplan.errors import KueueplanError

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "environments"

pytestmark = pytest.mark.skipif(not SPEC.is_dir(), reason="the demo spec environments/ is not in this checkout")


def _copy(tmp_path: Path) -> Path:
    spec = tmp_path / "environments"
    shutil.copytree(SPEC, spec)
    return spec


def _edit(path: Path, old: str, new: str, nth: int = 1) -> int:
    """Replace the nth occurrence of `old` (a whole line's text) and return its 1-based line."""
    lines = path.read_text().splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if line.rstrip("\n") == old]
    index = hits[nth - 1]
    lines[index] = new + "\n"
    path.write_text("".join(lines))
    return index + 1


def _error(spec: Path) -> KueueplanError:
    with pytest.raises(KueueplanError) as info:
        compile_platform(spec)
    return info.value


def test_a_flavor_typo_in_the_base_is_reported_in_the_base_not_in_the_overlay(tmp_path: Path) -> None:
    # The case: a typo at teams.yaml:14 was reported at env-dev.yaml:13 (dev's overlay touches
    # team-a's quotas, and the merged list's index 0 is not the overlay's index 0).
    spec = _copy(tmp_path)
    line = _edit(spec / "teams.yaml", "  - flavor: gpu-a100", "  - flavor: gpu-a10")
    err = _error(spec)
    assert (Path(err.file).name, err.line) == ("teams.yaml", line), str(err)
    assert "gpu-a10" in err.message


def test_a_quota_error_in_the_base_is_found_by_flavor_after_the_overlay_drops_one(tmp_path: Path) -> None:
    # dev drops team-a's gpu-h100 quota, so the merged list's cpu-standard is index 1, the file's is index 2.
    spec = _copy(tmp_path)
    line = _edit(spec / "teams.yaml", "      cpu: 8", "      cpu: {nominalQuota: 8, lendingLimit: 9}")
    err = _error(spec)
    assert (Path(err.file).name, err.line) == ("teams.yaml", line), str(err)
    assert "lendingLimit" in err.message


def test_a_value_the_overlay_merges_into_is_reported_where_it_is_written(tmp_path: Path) -> None:
    # dev's overlay sets team-b's cpu nominalQuota only; the borrowingLimit next to it stays the base's.
    spec = _copy(tmp_path)
    env = spec / "env-dev.yaml"
    line = _edit(env, "            cpu: {nominalQuota: 12}", "            cpu: {nominalQuota: 12, lendingLimit: 13}")
    err = _error(spec)
    assert (Path(err.file).name, err.line) == ("env-dev.yaml", line), str(err)


def test_cli_build_names_the_base_line(tmp_path: Path) -> None:
    spec = _copy(tmp_path)
    line = _edit(spec / "teams.yaml", "  - flavor: gpu-a100", "  - flavor: gpu-a10")
    result = CliRunner().invoke(main, ["build", str(spec), "-o", str(tmp_path / "gen")])
    assert result.exit_code == 2
    assert f"teams.yaml:{line}:" in result.output and "env-dev.yaml" not in result.output
