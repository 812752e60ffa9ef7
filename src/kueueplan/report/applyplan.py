"""The apply plan (workflow/applyplan.py) in the diff report's three forms. Names, field paths and messages come
from the pull request: in Markdown every character Markdown or HTML would interpret is escaped."""

from __future__ import annotations

import re
from typing import Any, Callable

from kueueplan.workflow.manifests import key_text


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+!~>-])")  # `|` is the table helper's (report/diff.py _cell)


def md(text: str) -> str:
    """Literal text in a Markdown table cell: no code spans, links, emphasis, HTML or line breaks."""
    text = " ".join(str(text).split())
    return _MARKDOWN.sub(r"\\\1", text).replace("<", "&lt;")


def text_lines(steps: list[Any]) -> list[str]:
    return [f"  {'✗' if s.blocking else '•'} apply: {s.text}" + ("" if s.blocking else f" (allowed: {s.allow_key})")
            for s in steps]


def markdown_lines(steps: list[Any], table: Callable[[list[str], list[list[Any]]], list[str]]) -> list[str]:
    if not steps:
        return []
    rows = [["❌" if s.blocking else f"✅ allowed ({s.allow_key})", s.rule, md(key_text(s.key)), md(s.message),
             md(s.advice)] for s in steps]
    return ["#### What Argo CD / Flux will do", ""] + table(["", "Rule", "Object", "The apply", "What to do"], rows)


def as_json(steps: list[Any]) -> list[dict[str, Any]]:
    return [{"rule": s.rule, "kind": s.key[0], "namespace": s.key[1] or None, "name": s.key[2],
             "message": s.message, "advice": s.advice, "allowKey": s.allow_key, "allowed": s.allowed,
             "blocking": s.blocking} for s in steps]
