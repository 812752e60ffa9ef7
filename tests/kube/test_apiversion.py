"""kueueplan's API version is spelled once (kueueplan.kube.apiversion); every layer imports it."""

from __future__ import annotations

import ast
from pathlib import Path

from kueueplan.kube.apiversion import KUEUEPLAN_API

SRC = Path(__file__).resolve().parents[2] / "src" / "kueueplan"


def _spelled(path: Path) -> list[int]:
    """Lines where a string constant equal to the API version appears in code (docstrings are prose)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and node.value == KUEUEPLAN_API and id(node) not in docstrings]


def test_one_spelling_of_the_api_version() -> None:
    spelled = {str(p.relative_to(SRC)): lines for p in sorted(SRC.rglob("*.py")) if (lines := _spelled(p))}
    assert set(spelled) == {"kube/apiversion.py"}, spelled

