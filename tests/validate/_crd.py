"""Helpers for tests that read CRD files."""

from __future__ import annotations

from typing import Any, Iterator


def cel_validations(node: Any) -> Iterator[dict[str, Any]]:
    """Every `x-kubernetes-validations` entry anywhere in a CRD document."""
    if isinstance(node, dict):
        yield from node.get("x-kubernetes-validations") or []
        for value in node.values():
            yield from cel_validations(value)
    elif isinstance(node, list):
        for value in node:
            yield from cel_validations(value)
