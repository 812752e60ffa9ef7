"""Regular expressions from the repository (policy naming rules, CRD `pattern`s), matched in linear time.

Python's `re` backtracks: `^(a+)+$` against "aaaa…b" takes exponential time, so a pull request could hang CI
with one line of policy. RE2 (the `google-re2` package, Google's engine) never backtracks, and it is the very
syntax Kubernetes uses for CRD `pattern`s (Go's regexp is RE2), so `^(?i)…` and the like mean what the API
server means. Back-references and look-arounds, which RE2 refuses, are refused here with a clear message.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print its own parse errors to stderr; we report them


class RegexError(ValueError):
    """A pattern RE2 cannot compile."""


@lru_cache(maxsize=1024)
def compile_regex(pattern: str) -> Any:
    """The compiled RE2 pattern (with `.search`), or RegexError naming the problem."""
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as err:
        detail = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else str(err)
        raise RegexError(f"{pattern!r} is not an RE2 regular expression: {detail}") from None


def escape(text: str) -> str:
    return re2.escape(text)
