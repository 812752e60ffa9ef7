"""The unit of output: one problem, where it is, and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("error", "warning", "info")
_RANK = {"error": 0, "warning": 1, "info": 2}


def severity_rank(severity: str) -> int:
    """0 for error, 1 for warning, 2 for info: lower is more severe."""
    return _RANK[severity]


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: str
    file: str
    line: int | None
    object: str
    message: str
    column: int | None = None  # known for problems found while reading a file (YAML syntax)

    def sort_key(self) -> tuple[str, int, str, str, str]:
        return (self.file, self.line or 0, self.rule, self.object, self.message)

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"rule": self.rule, "severity": self.severity, "file": self.file,
                                  "line": self.line, "object": self.object, "message": self.message}
        if self.column is not None:
            out["column"] = self.column
        return out
