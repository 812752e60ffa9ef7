"""Runs every benchmark and prints their tables: the figures in the README's "Performance" section.

    .venv/bin/python benchmarks/run.py

Each benchmark generates its own inputs (issue 5's shapes, mirroring Kueue's scheduler performance tests) and
measures whole `kueueplan` processes or the library in a fresh process, on whatever machine runs it.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = [
    ("build: 1,000-team spec, two environments (target <= 5 s)", ["bench_build.py"]),
    ("validate: 1,000-tenant platform with CRD schemas and CEL (target <= 1 s)", ["bench_validate.py"]),
    ("CEL libraries on the CRDs' rules", ["bench_validate.py", "--cel-libraries"]),
    ("validate: ValidatingAdmissionPolicies on 1,000 tenants (issue 15)", ["bench_vap.py"]),
    ("simulate: Kueue's scheduler performance shape, `kueueplan simulate FILE -o json` end to end "
     "(targets <= 5 s; <= 12 s CPU for every large variant, issue 16)", ["bench_simulate.py"]),
    ("simulate: plain manifests as load, `kueueplan simulate -` on one YAML stream of annotated Jobs",
     ["bench_manifests.py", "50x100"]),
    ("input limits: real work accepted, hostile input refused (targets <= 10 s, <= 1 GB)", ["bench_limits.py"]),
    ("capacity planning: Monte-Carlo runs and quota search", ["bench_planning.py"]),
]


START, END = "<!-- perf:start -->", "<!-- perf:end -->"


def tables(benchmarks: list[tuple[str, list[str]]] = BENCHMARKS) -> str:
    """The machine line, then a `#### title` section with each benchmark's output."""
    from kueueplan.simulate import headplan, native

    cpus = len(__import__("os").sched_getaffinity(0))
    core = "pure Python" if native.twin(headplan) is headplan else "head plans compiled (Cython, setup.py)"
    out = [f"machine: {platform.machine()}, {cpus} CPUs, Python {platform.python_version()}; simulator: {core}", ""]
    for title, args in benchmarks:
        done = subprocess.run([sys.executable, str(HERE / args[0]), *args[1:]], capture_output=True, text=True)
        out += [f"#### {title}", "", done.stdout.strip() or done.stderr.strip(), ""]
    return "\n".join(out)


def readme_with(body: str, text: str) -> str:
    """The README `body` with `text` between its perf markers, everything else kept."""
    if body.count(START) != 1 or body.count(END) != 1 or body.index(START) > body.index(END):
        raise ValueError(f"README.md needs one {START} line followed by one {END} line")
    head, rest = body.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{text}\n{END}{tail}"


def main(argv: list[str]) -> None:
    """Print the tables; with --readme, also put them between the README's perf markers (never by hand)."""
    text = tables()
    print(text)
    if "--readme" in argv:
        readme = HERE.parent / "README.md"
        readme.write_text(readme_with(readme.read_text(encoding="utf-8"), text), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv)
