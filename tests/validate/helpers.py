"""Run the validator on YAML text the way the CLI would on a folder."""

from __future__ import annotations

from pathlib import Path

from kueueplan.validate import Result, validate


def run_text(tmp: Path, text: str, crds: list[str] | None, name: str = "example.yaml") -> Result:
    folder = tmp / "in"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return validate([str(folder)], crds=crds, policies=[])


def rules_of(result: Result, severity: str | None = None) -> set[str]:
    return {f.rule for f in result.findings if severity is None or f.severity == severity}
