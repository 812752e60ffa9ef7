"""The one error type every layer raises for bad input; the CLI turns it into `file:line: message` and exit 2."""

from __future__ import annotations


class KueueplanError(Exception):
    """Unusable input: names the file, the line where known, and what to do."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 column: int | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.hint = hint

    def location(self) -> str:
        parts = [p for p in (self.file, self.line, self.column) if p is not None]
        return ":".join(str(p) for p in parts)

    def __str__(self) -> str:
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        return f"{text}\n  hint: {self.hint}" if self.hint else text


class InputRefusedError(KueueplanError):
    """Input refused outright (over a resource limit, a CRD that cannot be used): exit 2 from every command,
    never turned into a finding among others, even when met in the middle of a check."""
