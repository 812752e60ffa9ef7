"""Benchmark `kueueplan build` on a 1,000-team spec for two environments (issue 5 target: <= 5 s).

    python benchmarks/bench_build.py [--teams 1000] [--runs 3] [--flux]

Each run is a fresh `kueueplan build` process (interpreter start-up included, as in CI) into an empty folder,
then one more into the same folder, where nothing changes and nothing is written. Peak memory is the build
process's maximum resident set size. `--flux` also writes each environment's Flux Kustomization (health checks
for every queue, ignore rules derived for every workload: compile/owned.py).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.compile._support import write_big_spec  # noqa: E402  (one generator for the test and the benchmark)

KUEUEPLAN = [sys.executable, "-m", "kueueplan"]


def timed_build(spec: Path, out: Path, extra: tuple[str, ...] = ()) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one build process."""
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    subprocess.run([*KUEUEPLAN, "build", str(spec), "-o", str(out), *extra], check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return wall, peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--flux", action="store_true", help="also write the Flux Kustomizations")
    args = parser.parse_args()
    extra = ("--flux",) if args.flux else ()
    with tempfile.TemporaryDirectory() as tmp:
        spec = write_big_spec(Path(tmp) / "spec", args.teams)
        fresh: list[float] = []
        peak = 0.0
        for _ in range(args.runs):
            out = Path(tmp) / "gen"
            shutil.rmtree(out, ignore_errors=True)
            wall, peak = timed_build(spec, out, extra)
            fresh.append(wall)
        unchanged, _ = timed_build(spec, Path(tmp) / "gen", extra)
        objects = sum(f.read_text().count("\nkind: ") for f in (Path(tmp) / "gen").rglob("*.yaml"))
    best = min(fresh)
    print(f"| input | objects written | build (best of {args.runs}) | rebuild, nothing changed | peak RSS | objects/s |")
    print("|---|---|---|---|---|---|")
    label = f"{args.teams} teams x 2 environments" + (" (+ Flux)" if args.flux else "")
    print(f"| {label} | {objects} | {best:.2f} s | {unchanged:.2f} s | {peak:.0f} MiB | "
          f"{objects / best:,.0f} |")


if __name__ == "__main__":
    main()
