"""The apply plan (workflow/applyplan.py) in the diff report's three forms. Every string from the change is
escaped for Markdown by the caller's table helper."""

from __future__ import annotations

from typing import Any, Callable

from kueueplan.workflow.manifests import key_text


def text_lines(steps: list[Any]) -> list[str]:
    return [f"  {'✗' if s.blocking else '•'} apply: {s.text}" + ("" if s.blocking else f" (allowed: {s.allow_key})")
            for s in steps]


def markdown_lines(steps: list[Any], table: Callable[[list[str], list[list[Any]]], list[str]]) -> list[str]:
    if not steps:
        return []
    rows = [["❌" if s.blocking else f"✅ allowed ({s.allow_key})", s.rule, f"`{key_text(s.key)}`", s.message,
             s.advice] for s in steps]
    return ["#### What Argo CD / Flux will do", ""] + table(["", "Rule", "Object", "The apply", "What to do"], rows)


def as_json(steps: list[Any]) -> list[dict[str, Any]]:
    return [{"rule": s.rule, "kind": s.key[0], "namespace": s.key[1] or None, "name": s.key[2],
             "message": s.message, "advice": s.advice, "allowKey": s.allow_key, "allowed": s.allowed,
             "blocking": s.blocking} for s in steps]
