"""Platform policy configuration (placeholder, completed later)."""
from __future__ import annotations

from pathlib import Path
from typing import Any


class Policy:
    files: list[str] = []


def load_policies(paths: list[str | Path], docs: list[Any]) -> Policy | None:
    return None
