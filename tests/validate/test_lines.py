"""Fast per-document line lookup agrees with yamlio's whole-file lookup on every key of real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kueueplan.kube.yamlio import load_file, load_text
from kueueplan.validate.lines import line_of


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, path + (i,))
    return out


def test_lines_match_yamlio_on_upstream_files(shared_dir: Path) -> None:
    files = sorted((shared_dir / "upstream").rglob("*.yaml"))
    files = [f for f in files if "crds" not in f.parts]
    checked = 0
    for f in files:
        try:
            docs = load_file(f)
        except Exception:  # noqa: BLE001 - invalid upstream fragments are not this test's subject
            continue
        for doc in docs:
            # the document itself: its first key (yamlio answers the document start, possibly a comment)
            assert line_of(doc, ()) >= doc.line
            for path in _paths(doc.data)[1:]:
                assert line_of(doc, path) == doc.line_of(path), (f, path)
                checked += 1
    assert checked > 1000


def test_lines_with_comments_empty_documents_and_end_markers() -> None:
    text = ("# head\n---\n# c\na: 1\nb:\n  - x\n  - y: 2\n...\n---\n---\nc:\n  d: |\n    --- not a separator\n"
            "  e: 3\n")
    docs = load_text(text, "t")
    for doc in docs:
        for path in _paths(doc.data)[1:]:
            assert line_of(doc, path) == doc.line_of(path), path
