"""Fixtures for the workflow tests: tutorial manifests copied into a temp folder, and a YAML writer."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

import pytest
import yaml

# gpu-flavor-org.yaml is an earlier variant of gpu-flavor.yaml (the same object); a cluster holds one of them.
PREEMPTION_SKIP = {"gpu-flavor-org.yaml", "SOURCE.md"}


@pytest.fixture
def preemption_dir(shared_dir: Path, tmp_path: Path) -> Path:
    """The kueue-preemption tutorial's manifests (teams A and B sharing cohort team-ab), one variant."""
    src = shared_dir / "upstream" / "seeds" / "kueue-preemption"
    dest = tmp_path / "preemption"
    dest.mkdir()
    for f in sorted(src.iterdir()):
        if f.name not in PREEMPTION_SKIP:
            shutil.copy(f, dest / f.name)
    return dest


@pytest.fixture
def write_yaml() -> Callable[..., Path]:
    def write(path: Path, *docs: object) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump_all(list(docs), sort_keys=False))
        return path

    return write
