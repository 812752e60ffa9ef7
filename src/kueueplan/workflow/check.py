"""`kueueplan check`: the one CI command. Drift of the committed gen/, validation, and every environment's
declared load simulated against its expectations, gathered into one report.

Each step is a small function so a failure in one (say, findings) still lets the others report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kueueplan.errors import InputRefusedError, KueueplanError


@dataclass(frozen=True)
class Drift:
    path: str  # relative to the gen folder
    problem: str  # differs, missing, stale


@dataclass
class EnvSimulation:
    env: str
    workloads: int = 0
    expectations: int = 0
    failed: int = 0  # expectations that failed, never more than `expectations`
    failures: list[str] = field(default_factory=list)  # one line per workload that broke one
    skipped: str | None = None  # why it could not run (input validation already reports as a finding)
    runs: int = 1  # Monte-Carlo runs the expectations were judged on (`workloads` counts run 0)


@dataclass
class CheckReport:
    spec_dir: str
    gen_dir: str
    files: int = 0
    drift: list[Drift] = field(default_factory=list)
    gen_checked: bool = True
    findings: list[Any] = field(default_factory=list)  # kueueplan.validate.Finding
    fail_on: str = "error"
    simulations: list[EnvSimulation] = field(default_factory=list)
    apply: list[Any] = field(default_factory=list)  # workflow.applyplan.ApplyStep, with --base
    schema_skipped: str | None = None  # why OpenAPI schema and CEL checks were (partly) not applied

    def failing_findings(self) -> list[Any]:
        from kueueplan.validate.finding import severity_rank

        return [f for f in self.findings if severity_rank(f.severity) <= severity_rank(self.fail_on)]

    @property
    def problems(self) -> list[str]:
        out = []
        if self.drift:
            out.append(f"{len(self.drift)} file(s) in {self.gen_dir} differ from a fresh build")
        if self.failing_findings():
            out.append(f"{len(self.failing_findings())} validation finding(s) at or above {self.fail_on}")
        failed = sum(s.failed for s in self.simulations)
        if failed:
            out.append(f"{failed} expectation(s) failed")
        blocked = [s for s in self.apply if s.blocking]
        if blocked:
            out.append(f"{len(blocked)} apply step(s) the platform policy does not allow")
        return out

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0


def schema_skipped(result: Any) -> str | None:
    """Why validate applied no (or not every) OpenAPI schema and CEL rule, in words; None when it applied them."""
    if not result.crds:
        return ("OpenAPI schema and CEL checks skipped: no CRDs were loaded "
                "(pass --crds, or `kueueplan schemas pull`)")
    if result.without_crd:
        return f"OpenAPI schema and CEL checks skipped for {', '.join(result.without_crd)}: no CRD for them"
    return None


def drift(rendered: dict[str, str], gen_dir: Path) -> list[Drift]:
    """Files a fresh build would write differently, add, or prune (generated files only) under gen_dir."""
    from kueueplan.emit import has_marker
    from kueueplan.emit.build import ARGOCD_FRAGMENT

    out = []
    for rel, text in sorted(rendered.items()):
        path = gen_dir / rel
        if _linked(gen_dir, rel):
            out.append(Drift(rel, "symlink"))  # never read through: build refuses it too
        elif not path.is_file():
            out.append(Drift(rel, "missing"))
        elif path.read_text(encoding="utf-8", errors="replace") != text:
            out.append(Drift(rel, "differs"))
    envs = {rel.split("/", 1)[0] for rel in rendered}
    if gen_dir.is_dir():
        for path in sorted(gen_dir.rglob("*.yaml")):
            rel = path.relative_to(gen_dir).as_posix()
            top = rel.split("/", 1)[0]
            generated_env = top in envs or (gen_dir / top / "kustomization.yaml").is_file() or \
                rel == ARGOCD_FRAGMENT
            if rel not in rendered and _linked(gen_dir, rel):
                continue
            if rel not in rendered and generated_env and has_marker(path.read_text(encoding="utf-8", errors="replace")):
                out.append(Drift(rel, "stale"))
    return out


def _linked(root: Path, rel: str) -> bool:
    """Whether `root` or anything on the way to root/rel is a symlink."""
    current = root
    for part in ("", *rel.split("/")):
        current = current / part if part else current
        if current.is_symlink():
            return True
    return False


def _gitops_flags(gen_dir: Path) -> tuple[bool, bool]:
    """Build the way the committed gen/ was built: with --argocd / --flux if their files are there."""
    argocd = any(gen_dir.glob("*/argocd-application.yaml"))
    flux = any(gen_dir.glob("*/flux-kustomization.yaml"))
    return argocd, flux


def run_check(spec_dir: Path, gen_dir: Path | None, fail_on: str = "error", simulate: bool = True,
              crds: list[str] | None = None, policies: list[str] | None = None,
              base_ref: str | None = None) -> CheckReport:
    from kueueplan.compile import environment_names
    from kueueplan.emit.build import render
    from kueueplan.spec.load import load_spec

    if not spec_dir.is_dir():
        raise KueueplanError(f"spec folder {spec_dir} does not exist", hint="pass the folder holding your spec, or "
                             "your plain manifests (a folder, a file, or - for `kustomize build` output on stdin)")
    report = CheckReport(str(spec_dir), str(gen_dir) if gen_dir else "-", fail_on=fail_on)
    if gen_dir is not None:
        argocd, flux = _gitops_flags(gen_dir)
        rendered = render(spec_dir, gen_dir, None, argocd=argocd, flux=flux).files
        report.files = len(rendered)
        report.drift = drift(rendered, gen_dir)
    else:
        report.gen_checked = False
    from kueueplan.validate import validate

    result = validate([str(spec_dir)], crds=crds, policies=policies)
    report.findings = list(result.findings)
    report.schema_skipped = schema_skipped(result)
    if simulate:
        from kueueplan.workflow.simulation import simulate_env

        platform = load_spec(spec_dir)
        for env in environment_names(platform):
            run = simulate_env(spec_dir, env)
            sim = EnvSimulation(env)
            if run is not None:
                sim.workloads = len(run.result.get("workloads", []))
                sim.failures = list(run.failed_expectations)
                sim.expectations = run.expectations
                sim.failed = run.failed
                sim.runs = run.runs
            report.simulations.append(sim)
    if base_ref is not None:
        report.apply = plan_against(spec_dir, base_ref, policies or [], simulate)
    return report


def plan_against(spec_dir: Path, base_ref: str, policies: list[str], simulate: bool) -> list[Any]:
    """The apply plan (workflow/applyplan.py) of the spec at `base_ref` -> the spec now, per environment, with
    the apply policy read at `base_ref`."""
    import tempfile

    from kueueplan.workflow.applyplan import apply_allowance, plan_env
    from kueueplan.workflow.gitbase import export_at
    from kueueplan.workflow.simulation import simulate_side
    from kueueplan.workflow.sources import load_side

    with tempfile.TemporaryDirectory(prefix="kueueplan-base-") as tmp:
        base = load_side(export_at(base_ref, spec_dir, Path(tmp)))
        head = load_side(spec_dir)
        allow = apply_allowance(list(policies), spec_dir, base_ref, Path(tmp))
        steps = []
        for env in sorted(set(base.envs) & set(head.envs)):
            run = simulate_side(base, env) if simulate and base.is_spec else None
            steps += plan_env(env, base.envs[env], head.envs[env], run.result if run else None, allow(env))
        return steps


def is_spec_folder(path: Path) -> bool:
    from kueueplan.workflow.manifests import is_spec_document, load_documents

    return path.is_dir() and any(is_spec_document(d.data) for d in load_documents([path]))


def run_manifest_check(arg: str, fail_on: str = "error", simulate: bool = True, crds: list[str] | None = None,
                       policies: list[str] | None = None, stdin_text: str | None = None,
                       kueue_version: str | None = None, kuberay_version: str | None = None) -> CheckReport:
    """A repository of plain manifests (a folder, a file or `-`): validation, then its workloads simulated as
    the load (no build to compare, no declared expectations), both for `kueue_version` (default the newest)."""
    from kueueplan.validate import validate
    from kueueplan.workflow.manifests import read_stdin_text
    from kueueplan.workflow.simulation import has_load, manifests_scenario, read_input, run

    if arg == "-" and stdin_text is None:
        stdin_text = read_stdin_text()  # read once: validation and simulation both need it
    report = CheckReport(arg, "-", gen_checked=False, fail_on=fail_on)
    result = validate([arg], crds=crds, policies=policies, stdin_text=stdin_text, kueue_version=kueue_version,
                      kuberay_version=kuberay_version)
    report.findings = list(result.findings)
    report.schema_skipped = schema_skipped(result)
    if simulate:
        try:
            name, docs, _spec = read_input(arg, stdin_text)
            scenario = manifests_scenario(docs, name, kueue_version)
        except KueueplanError as err:
            unreadable = any(f.rule == "KP001" for f in report.findings)  # not YAML at all: unusable (exit 2)
            if isinstance(err, InputRefusedError) or unreadable or not report.failing_findings():
                raise
            # e.g. a quota that is not a quantity: validate has reported it at its line (exit 1); the
            # simulation cannot run on it, which is said instead of dropping those findings with an exit 2
            report.simulations.append(EnvSimulation(arg, skipped=f"{err.message} (fix the findings above)"))
            return report
        sim = EnvSimulation(name)
        if has_load(scenario):
            result = run(scenario)
            sim.workloads = len(result.result.get("workloads", []))
        report.simulations.append(sim)
    return report
