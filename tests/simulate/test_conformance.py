"""Every conformance case in ../shared/conformance/simulate: Kueue's own preemption tests, run through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.simulate.conformance import check, run_cli, run_in_process
from tests.conftest import SHARED

CASES = sorted((SHARED / "conformance" / "simulate").glob("*.yaml")) if SHARED.is_dir() else []


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_cases_present(shared_dir: Path) -> None:
    assert sorted((shared_dir / "conformance" / "simulate").glob("*.yaml")), "no conformance cases found"


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_conformance_case(path: Path, tmp_path: Path, shared_dir: Path) -> None:
    case = _load(path)
    code, out, err = run_cli(case["scenario"], tmp_path)
    assert code == 0, err
    assert out is not None
    assert check(case["expect"], out) == [], f"{case['source']['test']}"


@pytest.mark.parametrize("path", CASES[:3], ids=[p.stem for p in CASES[:3]])
def test_conformance_deterministic(path: Path, shared_dir: Path) -> None:
    scenario = _load(path)["scenario"]
    assert run_in_process(scenario) == run_in_process(scenario)
