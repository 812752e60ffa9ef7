"""`kueueplan validate PATH...`: what the API server, Kueue's webhooks and the platform policies would reject."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kueueplan.cli import main


@main.command()
@click.argument("paths", nargs=-1)
@click.option("--crds", "crds", multiple=True, type=click.Path(),
              help="CRD folder, CRD file or Kueue's manifests.yaml (repeatable); overrides the built-in schema pack "
                   "kind by kind")
@click.option("--policies", "policies", multiple=True, type=click.Path(),
              help="Policy file or folder (repeatable); default: ./policies if it exists")
@click.option("--no-policies", is_flag=True, help="Do not apply platform policies")
@click.option("-o", "--output", "fmt", default="text", show_default=True,
              type=click.Choice(["text", "json", "sarif", "junit", "github", "markdown"]),
              help="Output format (markdown: only with --list-rules)")
@click.option("--fail-on", default="error", show_default=True, type=click.Choice(["error", "warning", "info"]),
              help="Exit 1 when a finding of this severity or worse exists")
@click.option("--select", "select", multiple=True, help="Only run these rule IDs (repeatable)")
@click.option("--kueue-version", default=None,
              help="Kueue release plain manifests target, e.g. v0.8 or v0.17.3: picks its CRD schemas and pod sets "
                   "(a spec environment's kueueVersion wins; default: the newest supported)")
@click.option("--kuberay-version", default=None,
              help="KubeRay release RayJobs/RayClusters target, e.g. v1.4 (default: the newest supported)")
@click.option("--list-rules", is_flag=True, help="Print the rule catalogue and exit")
def validate(paths: tuple[str, ...], crds: tuple[str, ...], policies: tuple[str, ...], no_policies: bool,
             fmt: str, fail_on: str, select: tuple[str, ...], kueue_version: str | None, kuberay_version: str | None,
             list_rules: bool) -> None:
    """Validate spec folders, manifest files/folders and `-` (stdin) before Argo CD or Flux applies them.

    Exit codes: 0 no finding at --fail-on or worse, 1 findings, 2 unusable input or usage error.
    """
    from kueueplan.report.findings import render, rules_markdown, rules_text
    from kueueplan.validate import validate as run
    from kueueplan.validate.registry import all_rules

    if list_rules:
        click.echo(rules_markdown(all_rules()) if fmt == "markdown" else rules_text(all_rules()), nl=False)
        return
    if fmt == "markdown":
        raise click.UsageError("-o markdown is only for --list-rules")
    if not paths:
        raise click.UsageError("give at least one path (a spec folder, manifests, or - for stdin)")
    unknown = sorted(set(select) - {r.id for r in all_rules()})
    if unknown:
        raise click.UsageError(f"unknown rule ID(s): {', '.join(unknown)}")
    policy_paths: list[str] | None = list(policies)
    if no_policies:
        policy_paths = []
    elif not policies and Path("policies").is_dir():
        policy_paths = ["policies"]
    result = run(list(paths), crds=list(crds) or None, policies=policy_paths, select=set(select) or None,
                 kueue_version=kueue_version, kuberay_version=kuberay_version)
    click.echo(render(result, fmt, all_rules(), fail_on), nl=False)
    sys.exit(1 if result.fails(fail_on) else 0)
