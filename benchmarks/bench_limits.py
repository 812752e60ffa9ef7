"""Benchmark the input limits (issue 11): what real work costs, and how fast hostile input is refused.

Each case runs `kueueplan` in its own process and prints wall time, peak memory, exit code and the node count:

- Kueue's large-scale performance shape as one Scenario file (1,000 ClusterQueues in 10 cohorts, 50,000
  workloads; bench_simulate.py's "large"), loaded by `kueueplan validate` (must be accepted);
- flat YAML lists of 2 MB and 30 MB (the 30 MB one must end with exit 2 within 10 s and 1 GB);
- a billion-laughs alias bomb, an alias bomb inside a CRD, a CRD with nested `.all()` CEL, and a policy
  naming regex `^(a+)+$` (all exit 2, or a clean check for the regex, within 10 s and 1 GB).

Not a test; run `.venv/bin/python benchmarks/bench_limits.py`.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
KUEUEPLAN = str(Path(sys.executable).parent / "kueueplan")
sys.path.insert(0, str(HERE))


def perf_scenario_text() -> str:
    from bench_simulate import SIZES, scenario

    return yaml.dump(scenario(*SIZES["large"]), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)


def flat_list(megabytes: float) -> str:
    count = int(megabytes * 1_000_000 / 12)
    return "".join(f"- item{i:05d}\n" for i in range(count))


ALIAS_BOMB = "\n".join(['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
                       + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]) + "\n"


def crd(extra_schema: str, rule: str = "true") -> str:
    return f"""apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: bombs.x.io}}
spec:
  group: x.io
  names: {{kind: Bomb, plural: bombs}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              l: {{type: array, items: {{type: integer}}}}
{extra_schema}            x-kubernetes-validations:
            - rule: "{rule}"
"""


def bomb_object(items: int) -> str:
    return ("apiVersion: x.io/v1\nkind: Bomb\nmetadata: {name: b, namespace: d}\nspec:\n  l: ["
            + ",".join(["1"] * items) + "]\n")


REDOS_POLICY = """apiVersion: policy.kueueplan.io/v1alpha1
kind: PlatformPolicy
metadata: {name: p}
spec:
  naming:
    Namespace: "^(a+)+$"
"""
REDOS_NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + "a" * 40 + "-b\n"


def cases(tmp: Path) -> list[tuple[str, list[str], str]]:
    files = {
        "scenario.yaml": perf_scenario_text(),
        "flat2.yaml": flat_list(2),
        "flat30.yaml": flat_list(30),
        "bomb.yaml": ALIAS_BOMB,
        "crd-alias/crd.yaml": crd("") + "---\n" + ALIAS_BOMB,  # the bomb rides along in the CRD file
        "crd-cel/crd.yaml": crd("", "self.l.all(a, self.l.all(b, self.l.all(c, a + b + c >= 0)))"),
        "obj.yaml": bomb_object(3000),
        "policy/p.yaml": REDOS_POLICY,
        "ns.yaml": REDOS_NAMESPACE,
    }
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
    return [
        ("50,000-workload scenario (accepted)", ["validate", "scenario.yaml"], "scenario.yaml"),
        ("2 MB flat list", ["validate", "flat2.yaml"], "flat2.yaml"),
        ("30 MB flat list", ["validate", "flat30.yaml"], "flat30.yaml"),
        ("alias bomb (10^9 nodes)", ["validate", "bomb.yaml"], "bomb.yaml"),
        ("alias bomb in a CRD", ["validate", "obj.yaml", "--crds", "crd-alias"], "crd-alias/crd.yaml"),
        ("nested .all() CEL in a CRD", ["validate", "obj.yaml", "--crds", "crd-cel"], "crd-cel/crd.yaml"),
        ("policy regex ^(a+)+$", ["validate", "ns.yaml", "--policies", "policy"], "ns.yaml"),
    ]


def run(args: list[str], cwd: Path) -> tuple[float, float, int, str]:
    code = ("import resource, subprocess, sys, time\n"
            "t = time.perf_counter()\n"
            f"p = subprocess.run({[KUEUEPLAN]!r} + sys.argv[1:], capture_output=True, text=True)\n"
            "w = time.perf_counter() - t\n"
            "m = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
            "print(w, m, p.returncode, (p.stderr or p.stdout).strip().splitlines()[0][:90] if (p.stderr or p.stdout).strip() else '')")
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True).stdout
    wall, peak_kb, rc, message = out.split(" ", 3)
    peak_mb = int(peak_kb) / (1024 * 1024 if sys.platform == "darwin" else 1024)  # macOS reports bytes
    return float(wall), peak_mb, int(rc), message.strip()


def main() -> None:
    from kueueplan.kube import yamlio

    print(f"limits: {yamlio.MAX_NODES:,} nodes per file, {yamlio.MAX_ALIASES:,} aliases, depth {yamlio.MAX_DEPTH}")
    print()
    print(f"| {'input':<36} | {'size':>8} | {'nodes':>11} | {'wall':>7} | {'peak':>8} | exit | message")
    print(f"|{'-' * 38}|{'-' * 10}|{'-' * 13}|{'-' * 9}|{'-' * 10}|------|---------")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for title, args, main_file in cases(tmp):
            text = (tmp / main_file).read_text()
            nodes = "-" if len(text) > 5_000_000 else f"{_nodes(text):,}"
            wall, peak, rc, message = run(args, tmp)
            print(f"| {title:<36} | {len(text) / 1e6:6.2f}MB | {nodes:>11} | {wall:6.2f}s | {peak:6.0f}MB | {rc:>4} | "
                  f"{message}")


def _nodes(text: str) -> int:
    try:
        return sum(type(e).__name__ in ("ScalarEvent", "AliasEvent", "MappingStartEvent", "SequenceStartEvent")
                   for e in yaml.parse(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError:
        return -1


if __name__ == "__main__":
    main()
