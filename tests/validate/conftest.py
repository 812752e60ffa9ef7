"""Fixtures for the validator tests: the shared CRDs and a hermetic CRD cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session", autouse=True)
def _hermetic_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    # Parsed-CRD cache and `schemas pull` target: never the user's ~/.cache during tests.
    os.environ["KUEUEPLAN_CACHE_DIR"] = str(tmp_path_factory.mktemp("kueueplan-cache"))


@pytest.fixture(scope="session")
def crd_paths(shared_dir: Path) -> list[str]:
    up = shared_dir / "upstream"
    return [str(up / "kueue" / "crds"), str(up / "kuberay" / "crds"), str(up / "autoscaler" / "crds")]
