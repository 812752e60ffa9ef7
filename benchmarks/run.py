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
    ("input limits: real work accepted, hostile input refused (targets <= 10 s, <= 1 GB)", ["bench_limits.py"]),
    ("capacity planning: Monte-Carlo runs and quota search", ["bench_planning.py"]),
]


START, END = "<!-- perf:start -->", "<!-- perf:end -->"


def tables() -> str:
    cpus = len(__import__("os").sched_getaffinity(0))
    out = [f"machine: {platform.machine()}, {cpus} CPUs, Python {platform.python_version()}", ""]
    for title, args in BENCHMARKS:
        done = subprocess.run([sys.executable, str(HERE / args[0]), *args[1:]], capture_output=True, text=True)
        out += [f"#### {title}", "", done.stdout.strip() or done.stderr.strip(), ""]
    return "\n".join(out)


def main(argv: list[str]) -> None:
    """Print the tables; with --readme, also put them between the README's perf markers (never by hand)."""
    text = tables()
    print(text)
    if "--readme" in argv:
        readme = HERE.parent / "README.md"
        body = readme.read_text(encoding="utf-8")
        head, rest = body.split(START, 1)
        _, tail = rest.split(END, 1)
        readme.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv)
