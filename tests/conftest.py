"""Shared fixtures: where ../shared lives, and the rule that CI never skips for its absence."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("KUEUEPLAN_SHARED", REPO.parent / "shared"))


def shared_path() -> Path:
    """../shared, or a skip with the reason; in CI (CI=true) its absence is a failure, never a skip, unless
    KUEUEPLAN_SHARED_OPTIONAL=true says the CI cannot have it (GitHub's, where ../shared is not public)."""
    if SHARED.is_dir():
        return SHARED
    if os.environ.get("CI") == "true" and os.environ.get("KUEUEPLAN_SHARED_OPTIONAL") != "true":
        pytest.fail(f"CI=true but the reference folder {SHARED} is missing; CI must run with ../shared beside the checkout")
    pytest.skip(f"reference material not found at {SHARED} (clone the project next to ../shared to run this test)")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return shared_path()


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO
