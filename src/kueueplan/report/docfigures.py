"""Figures in docs/ that show kueueplan's output on the demo platform: made by running it, never typed by hand.

A figure sits between `<!-- figure:NAME (generated: scripts/update-generated) -->` and `<!-- /figure:NAME -->`;
`update_docs(root)` rewrites every figure in `docs/*.md` and a test fails when one is stale, so the docs cannot
drift from the code (they did: a check summary with 19 files and 5 expectations when the demo had 20 and 6).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

_BLOCK = re.compile(r"(<!-- figure:(?P<name>[a-z0-9-]+) \(generated: scripts/update-generated\) -->\n)"
                    r"(?P<body>.*?)(<!-- /figure:(?P=name) -->)", re.S)


@contextlib.contextmanager
def _in_repo(root: Path) -> Iterator[None]:
    """Run as a user would in the repository root, with no CRD cache of this machine's (same output anywhere)."""
    old_cwd, old_cache = Path.cwd(), os.environ.get("KUEUEPLAN_CACHE_DIR")
    cache = tempfile.mkdtemp(prefix="kueueplan-docs-")
    os.chdir(root)
    os.environ["KUEUEPLAN_CACHE_DIR"] = cache
    try:
        yield
    finally:
        os.chdir(old_cwd)
        if old_cache is None:
            os.environ.pop("KUEUEPLAN_CACHE_DIR", None)
        else:
            os.environ["KUEUEPLAN_CACHE_DIR"] = old_cache
        shutil.rmtree(cache, ignore_errors=True)


def check_demo(root: Path) -> str:
    """`kueueplan check environments/` on the demo, as docs/workflow.md shows it."""
    from kueueplan.report.check import text
    from kueueplan.workflow.check import run_check

    with _in_repo(root):
        report = run_check(Path("environments"), Path("gen"), policies=["policies"])
    return f"```console\n$ kueueplan check environments\n{text(report)}```\n"


def build_error(root: Path) -> str:
    """The error `build` prints for a misspelt field in the demo's teams.yaml, as docs/build.md shows it."""
    from kueueplan.errors import KueueplanError
    from kueueplan.spec.load import load_spec

    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "environments"
        shutil.copytree(root / "environments", spec)
        teams = spec / "teams.yaml"
        teams.write_text(teams.read_text(encoding="utf-8").replace("      cpu: 48\n",
                                                                   "      cpu: {nominal_quota: 48}\n", 1))
        try:
            load_spec(spec)
        except KueueplanError as err:
            message = str(err).replace(str(spec), "environments")
        else:
            raise AssertionError("the misspelt field loaded")
    return f"```console\n$ kueueplan build\nerror: {message}\n```\n"


FIGURES: dict[str, Callable[[Path], str]] = {"check-demo": check_demo, "build-error": build_error}


def with_figures(text: str, root: Path) -> str:
    """`text` with every figure block regenerated."""
    def body(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in FIGURES:
            raise ValueError(f"unknown figure {name!r}")
        return match.group(1) + FIGURES[name](root) + match.group(4)

    return _BLOCK.sub(body, text)


def update_docs(root: Path) -> list[str]:
    """Regenerate the figures of docs/*.md; the files that changed."""
    changed = []
    for path in sorted((root / "docs").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        new = with_figures(text, root)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(str(path.relative_to(root)))
    return changed


if __name__ == "__main__":
    import sys

    for name in update_docs(Path(sys.argv[1] if len(sys.argv) > 1 else ".")):
        print(f"updated {name}")
