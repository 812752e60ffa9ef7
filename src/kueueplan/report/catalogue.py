"""The README's rule table, generated from the rules' docstrings like docs/rules.md."""

from __future__ import annotations

import re
from pathlib import Path

START = "<!-- rules:start (generated from the rule docstrings: scripts/update-generated) -->"
END = "<!-- rules:end -->"


def readme_with_rules(readme: str) -> str:
    """The README text with its rule table regenerated between the markers."""
    from kueueplan.report.findings import rules_table
    from kueueplan.validate.registry import all_rules

    block = f"{START}\n{rules_table(all_rules(), anchor='docs/rules.md#')}\n{END}"
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(readme):
        raise ValueError("README.md has no rule-table markers")
    return pattern.sub(lambda _: block, readme)


def update_readme(path: Path) -> bool:
    text = path.read_text(encoding="utf-8")
    new = readme_with_rules(text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text
