"""The apply plan (workflow/applyplan.py) in the diff report's three forms. Names, field paths and messages come
from the pull request: in Markdown they go through report/escape.py (the one escaping helper)."""

from __future__ import annotations

from typing import Any, Callable

from kueueplan.report.escape import md_code, md_text, one_line
from kueueplan.workflow.manifests import key_text


def text_lines(steps: list[Any]) -> list[str]:
    return [f"  {'✗' if s.blocking else '•'} apply: {one_line(s.text)}"
            + ("" if s.blocking else f" (allowed: {s.allow_key})") for s in steps]


def markdown_lines(steps: list[Any], table: Callable[[list[str], list[list[Any]]], list[str]]) -> list[str]:
    if not steps:
        return []
    rows = [["❌" if s.blocking else f"✅ allowed ({md_text(s.allow_key)})", md_text(s.rule),
             md_code(key_text(s.key), table=True), md_text(s.message), md_text(s.advice)] for s in steps]
    return ["#### What Argo CD / Flux will do", ""] + table(["", "Rule", "Object", "The apply", "What to do"], rows)


def as_json(steps: list[Any]) -> list[dict[str, Any]]:
    return [{"rule": s.rule, "kind": s.key[0], "namespace": s.key[1] or None, "name": s.key[2],
             "message": s.message, "advice": s.advice, "allowKey": s.allow_key, "allowed": s.allowed,
             "blocking": s.blocking} for s in steps]
