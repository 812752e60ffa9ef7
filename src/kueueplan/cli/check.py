"""`kueueplan check [SPEC_DIR]`: drift, validation and expectations in one CI summary (exit 0/1/2)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kueueplan.cli import main
from kueueplan.report.check import as_json, markdown, text
from kueueplan.workflow.check import is_spec_folder, run_check, run_manifest_check


@main.command()
@click.argument("spec_dir", default="environments")
@click.option("--gen", "gen_dir", type=click.Path(path_type=Path), default=None,
              help="The committed build output [default: gen/ beside SPEC_DIR].")
@click.option("--no-drift", is_flag=True, help="Do not compare with the committed build output.")
@click.option("--no-simulate", is_flag=True, help="Skip simulating the declared load.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default="error", show_default=True,
              help="Lowest finding severity that fails the check.")
@click.option("-o", "--output", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True)
@click.option("--crds", "crds", multiple=True, type=click.Path(),
              help="CRD folder, CRD file or Kueue's manifests.yaml (repeatable); overrides the built-in schema pack "
                   "kind by kind.")
@click.option("--policies", "policies", multiple=True, type=click.Path(),
              help="Policy file or folder (repeatable) [default: policies/ beside SPEC_DIR, if it exists].")
@click.option("--no-policies", is_flag=True, help="Do not apply platform policies.")
@click.option("--base", "base_ref", metavar="GIT_REF", default=None,
              help="Also plan the apply from SPEC_DIR at GIT_REF (what Argo CD / Flux will do; policy read there).")
@click.option("--kueue-version", default=None,
              help="Kueue release plain manifests target, e.g. v0.14: its CRD schemas, pod sets and default "
                   "Configuration (a spec's Environment sets its own kueueVersion) [default: the newest supported].")
@click.option("--kuberay-version", default=None,
              help="KubeRay release plain RayJobs/RayClusters target, e.g. v1.4 [default: the newest supported].")
def check(spec_dir: str, gen_dir: Path | None, no_drift: bool, no_simulate: bool, fail_on: str, fmt: str,
          crds: tuple[str, ...], policies: tuple[str, ...], no_policies: bool, base_ref: str | None,
          kueue_version: str | None, kuberay_version: str | None) -> None:
    """Build to a temporary folder and compare with the committed gen/, validate, and simulate every
    environment's declared load against its expectations. Exit 0 ok, 1 problems found, 2 unusable input.

    SPEC_DIR may instead hold plain manifests (a folder, a file, or `-` for stdin): they are validated and the
    workloads in them simulated as the load."""
    from kueueplan.spec.load import resolve_spec_dir

    resolved = None if spec_dir == "-" else resolve_spec_dir(spec_dir)  # a project folder: its environments/
    if resolved is None or (resolved.exists() and not is_spec_folder(resolved)):
        beside_arg = Path(spec_dir).parent / "policies"
        paths = [] if no_policies else list(policies) or ([str(beside_arg)] if beside_arg.is_dir() else [])
        report = run_manifest_check(spec_dir, fail_on, simulate=not no_simulate, crds=list(crds) or None,
                                    policies=paths, kueue_version=kueue_version, kuberay_version=kuberay_version)
        click.echo({"text": text, "markdown": markdown, "json": as_json}[fmt](report), nl=False)
        sys.exit(report.exit_code)
    spec_dir = resolved
    if kueue_version or kuberay_version:
        from kueueplan.errors import KueueplanError

        raise KueueplanError(f"{spec_dir} is a spec folder: --kueue-version and --kuberay-version are for plain "
                             "manifests", hint="set the release in the Environment (spec.kueueVersion) instead")
    gen = None if no_drift else (gen_dir or spec_dir.parent / "gen")
    beside = spec_dir.parent / "policies"
    policy_paths = [] if no_policies else list(policies) or ([str(beside)] if beside.is_dir() else [])
    report = run_check(spec_dir, gen, fail_on, simulate=not no_simulate, crds=list(crds) or None,
                       policies=policy_paths, base_ref=base_ref)
    click.echo({"text": text, "markdown": markdown, "json": as_json}[fmt](report), nl=False)
    sys.exit(report.exit_code)
