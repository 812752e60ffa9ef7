"""`kueueplan diff BASE HEAD` / `kueueplan diff --base REF PATH`: what a change does, ready for a PR comment."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

from kueueplan.cli import main
from kueueplan.errors import KueueplanError
from kueueplan.report.diff import as_json, markdown, text
from kueueplan.workflow.diff import diff_sides
from kueueplan.workflow.applyplan import apply_allowance
from kueueplan.workflow.gitbase import export_at
from kueueplan.workflow.simulation import load_simulator, simulate_side
from kueueplan.workflow.sources import load_side


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--base", "base_ref", metavar="GIT_REF", default=None,
              help="Compare PATH with the same path at this commit (then give one PATH).")
@click.option("--env", default=None, help="Only this environment.")
@click.option("-o", "--output", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True)
@click.option("--no-simulate", is_flag=True, help="Skip the simulation delta.")
@click.option("--load", "loads", multiple=True, type=click.Path(path_type=Path), metavar="FILE",
              help="Replay this load on both sides instead of their own: a `kubectl get workloads.kueue.x-k8s.io "
                   "-A -o yaml` export (a recorded history) or a Scenario file's load (repeatable). Reports the "
                   "change per workload and per team.")
@click.option("--policies", "policies", multiple=True, type=click.Path(path_type=Path),
              help="PlatformPolicy file or folder whose `apply:` section allows apply steps (repeatable) "
                   "[default: policies/ beside the path; with --base, as it is at GIT_REF].")
def diff(paths: tuple[Path, ...], base_ref: str | None, env: str | None, fmt: str, no_simulate: bool,
         loads: tuple[Path, ...], policies: tuple[Path, ...]) -> None:
    """Quota, object and simulated-outcome changes between BASE and HEAD, and what the apply will do.

    Each side is a spec folder or rendered manifests. Exit 1 when the change makes a declared workload
    inadmissible, breaks an expectation, or makes Argo CD / Flux delete a namespace or a workload, hit an
    immutable field, leave admitted work over quota, drain a queue or change an admitted job's template,
    unless the PlatformPolicy's `apply:` section allows it.

    With --load, both sides run that same load (e.g. last week's Workloads): "what would this change have
    done to it?" A workload admitted on BASE that HEAD never admits fails the change.
    """
    if base_ref is None and len(paths) != 2:
        raise KueueplanError("diff needs BASE and HEAD paths, or --base GIT_REF and one PATH")
    if base_ref is not None and len(paths) != 1:
        raise KueueplanError("with --base, give exactly one PATH (compared with itself at GIT_REF)")
    if loads and no_simulate:
        raise KueueplanError("--load replays a load in the simulation: it cannot go with --no-simulate")
    load = None
    if loads:
        from kueueplan.planning.replay import read_load

        load = read_load(list(loads))  # read once: both sides replay the very same arrivals
    with tempfile.TemporaryDirectory(prefix="kueueplan-base-") as tmp:
        base_path = export_at(base_ref, paths[0], Path(tmp)) if base_ref else paths[0]
        head_path = paths[-1]
        allow = apply_allowance(list(policies), paths[-1], base_ref, Path(tmp))
        simulate = None if no_simulate else load_simulator(load) if load else simulate_side
        report = diff_sides(load_side(base_path, env), load_side(head_path, env), simulate, allow,
                            per_team=load is not None, load=load.manifests if load else ())
        report.load = load.description if load else None
        report.load_warnings[:0] = list(load.warnings) if load else []
        if base_ref:
            report.base = f"{paths[0]}@{base_ref}"
        render = {"text": text, "markdown": markdown, "json": as_json}[fmt]
        click.echo(render(report), nl=False)
    sys.exit(report.exit_code)
