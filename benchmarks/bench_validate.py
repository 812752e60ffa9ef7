"""Benchmark `kueueplan validate` on a generated 1,000-tenant platform (issue 5).

Per tenant: a Namespace, a ClusterQueue with two resource groups and three flavors, and a LocalQueue
(≈3,000 objects), plus the shared ResourceFlavors. Validated with the Kueue CRD schemas and CEL rules (the
built-in schema pack unless --crds is given).
Prints a table: wall time, peak memory, objects/s. Not a test; run `python benchmarks/bench_validate.py`.

Usage: bench_validate.py [--tenants N] [--crds PATH ...] [--runs R]
       bench_validate.py --cel-libraries   (the measurement behind the choice of CEL library)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CRDS = REPO.parent / "shared" / "upstream" / "kueue" / "crds"
FLAVORS = ("on-demand", "spot", "gpu-a100")


def tenant_yaml(i: int, broken: bool = False) -> str:
    team = f"team-{i:04d}"
    typo = "namespaceSelectr" if broken else "namespaceSelector"
    return f"""---
apiVersion: v1
kind: Namespace
metadata:
  name: {team}
  labels:
    kueueplan.io/team: {team}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: {team}-cq
  labels:
    kueueplan.io/team: {team}
spec:
  cohortName: org-{i % 10}
  {typo}:
    matchLabels:
      kueueplan.io/team: {team}
  queueingStrategy: BestEffortFIFO
  preemption:
    reclaimWithinCohort: Any
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: on-demand
      resources:
      - name: cpu
        nominalQuota: "{8 + i % 8}"
        borrowingLimit: "4"
      - name: memory
        nominalQuota: {32 + i % 16}Gi
    - name: spot
      resources:
      - name: cpu
        nominalQuota: "16"
      - name: memory
        nominalQuota: 64Gi
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: gpu-a100
      resources:
      - name: nvidia.com/gpu
        nominalQuota: "{i % 4}"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: {team}-queue
  namespace: {team}
spec:
  clusterQueue: {team}-cq
"""


def platform_yaml(tenants: int, broken: int = 0) -> str:
    """`broken` tenants (spread evenly) misspell namespaceSelector: findings need line numbers."""
    flavors = "".join(f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata:\n  name: {f}\n"
                      for f in FLAVORS)
    step = tenants // broken if broken else 0
    return flavors + "".join(tenant_yaml(i, bool(step) and i % step == 0) for i in range(tenants))


def run_in_process(path: Path, crds: list[str]) -> tuple[float, int, int]:
    """Wall time of validate() in a warm process (CRD schemas and CEL programs already compiled)."""
    from kueueplan.validate import validate

    start = time.perf_counter()
    result = validate([str(path)], crds=crds, policies=[])
    return time.perf_counter() - start, result.objects, len(result.findings)


def run_cli(path: Path, crds: list[str]) -> tuple[float, float]:
    """A whole `kueueplan validate` process: wall time and peak RSS (MiB), as CI pays it."""
    cmd = [sys.executable, "-c", "from kueueplan.cli import main; main()", "validate", str(path), "-o", "json",
           "--no-policies"]
    for c in crds:
        cmd += ["--crds", c]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024


def crd_rules(folders: list[str]) -> list[str]:
    """Distinct create-time (non-oldSelf) CEL rules of every CRD in the folders."""
    import yaml

    rules: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for v in node.get("x-kubernetes-validations") or []:
                if "oldSelf" not in v["rule"]:
                    rules.add(v["rule"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for folder in folders:
        for f in sorted(Path(folder).glob("*.yaml")):
            walk(yaml.load(f.read_text(), Loader=yaml.CSafeLoader))
    return sorted(rules)


def compare_cel_libraries(folders: list[str], n: int = 2000) -> None:
    """common-expression-language (`cel`) vs cel-python (`celpy`) on the CRDs' own rules."""
    import cel

    try:
        import celpy
    except ImportError:  # cel-python is not a dependency: it is only measured against, where it is installed
        print("cel-python is not installed here (`pip install cel-python` to measure it against "
              "common-expression-language); the comparison is skipped.")
        return

    rules = crd_rules(folders)
    group = {"coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
             "flavors": [{"name": f"f{i}", "resources": [{"name": r, "nominalQuota": "4"}
                                                         for r in ("cpu", "memory", "nvidia.com/gpu")]}
                         for i in range(3)]}
    rule = "self.flavors.all(x, size(x.resources) == size(self.coveredResources))"
    start = time.perf_counter()
    fast = [cel.compile(r) for r in rules]
    cel_compile = time.perf_counter() - start
    env = celpy.Environment()
    start = time.perf_counter()
    slow = [env.program(env.compile(r)) for r in rules]
    celpy_compile = time.perf_counter() - start
    program = cel.compile(rule)
    start = time.perf_counter()
    for _ in range(n):
        assert program.execute({"self": group}) is True
    cel_eval = (time.perf_counter() - start) / n
    py_program = env.program(env.compile(rule))
    start = time.perf_counter()
    for _ in range(n // 10):
        assert bool(py_program.evaluate({"self": celpy.json_to_cel(group)}))
    celpy_eval = (time.perf_counter() - start) / (n // 10)
    print(f"| CEL library | compile {len(rules)} CRD rules | evaluate a resource-group rule | compiled |")
    print("|---|---|---|---|")
    print(f"| common-expression-language (cel) | {cel_compile * 1e3:.1f} ms | {cel_eval * 1e6:.0f} us | "
          f"{len(fast)}/{len(rules)} |")
    print(f"| cel-python (celpy) | {celpy_compile * 1e3:.1f} ms | {celpy_eval * 1e6:.0f} us | "
          f"{len(slow)}/{len(rules)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cel-libraries", action="store_true", help="compare the two CEL libraries and exit")
    parser.add_argument("--tenants", type=int, default=1000)
    parser.add_argument("--crds", nargs="*", default=[],
                        help="CRD folders (default: none, i.e. kueueplan's built-in schema pack)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--broken", type=int, default=0, help="tenants with a typo (findings with lines)")
    args = parser.parse_args()
    if args.cel_libraries:
        up = REPO.parent / "shared" / "upstream"
        compare_cel_libraries([str(up / "kueue" / "crds"), str(up / "kuberay" / "crds"),
                               str(up / "autoscaler" / "crds")])
        return
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("KUEUEPLAN_CACHE_DIR", str(Path(tmp) / "cache"))
        path = Path(tmp) / "platform.yaml"
        path.write_text(platform_yaml(args.tenants, args.broken))
        cold, _ = run_cli(path, args.crds)  # a fresh machine: CRDs parsed from YAML, then cached
        cli_wall, rss = min(run_cli(path, args.crds) for _ in range(args.runs))
        run_in_process(path, args.crds)  # warm: schemas and CEL compiled
        wall, objects, findings = min(run_in_process(path, args.crds) for _ in range(args.runs))
    print(f"| input | objects | `kueueplan validate` process (best of {args.runs}) | first run, nothing cached | "
          f"peak RSS | validate() warm | objects/s (process) | findings |")
    print("|---|---|---|---|---|---|---|---|")
    label = f"{args.tenants} tenants" + (f", {args.broken} broken" if args.broken else "")
    print(f"| {label} | {objects} | {cli_wall:.2f} s | {cold:.2f} s | {rss:.0f} MiB | {wall:.2f} s | "
          f"{objects / cli_wall:,.0f} | {findings} |")


if __name__ == "__main__":
    main()
