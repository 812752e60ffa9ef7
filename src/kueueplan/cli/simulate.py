"""`kueueplan simulate SCENARIO_OR_SPEC_DIR`: replay Kueue's admission offline.

Exit 0 when the run completed, 1 when an expectation failed, 2 for unusable input (via KueueplanError).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

import click

from kueueplan.cli import main
from kueueplan.errors import KueueplanError


def _load(path: str, env: str | None, until: str | None, kueue_version: str | None = None) -> Any:
    from kueueplan.simulate.scenario import parse_duration
    from kueueplan.workflow.simulation import scenario_for_input

    scenario = scenario_for_input(path, env, kueue_version)
    if until is not None:
        scenario.until = parse_duration(until, "--until")
    return scenario


def _warn_rejected(scenario: Any) -> None:
    """Objects Kueue would refuse cannot exist on a cluster: say so on stderr (the JSON contract is unchanged)."""
    from kueueplan.validate import webhook_rejections

    objects = list(scenario.manifests)
    seen: set[int | None] = set()
    for t in scenario.workloads:  # copies of one `workloads` entry differ only in name: check one
        if t.group is None or t.group not in seen:
            seen.add(t.group)
            objects.append((t.manifest, scenario.file, t.line))
    for f in webhook_rejections(objects):
        where = f"{f.file}:{f.line}" if f.line else f.file
        click.echo(f"warning: {where}: {f.rule} {f.object}: {f.message} (Kueue would reject this object; "
                   "the simulation applies it anyway)", err=True)


def _progress_bar() -> tuple[Callable[[int, int], None] | None, Callable[[], None]]:
    """A rich progress bar on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn

    prog = Progress(TextColumn("simulating"), BarColumn(), TextColumn("{task.completed}/{task.total} workloads"),
                    console=Console(stderr=True), transient=True)
    task = prog.add_task("sim", total=None)
    prog.start()

    def update(done: int, total: int) -> None:
        prog.update(task, completed=done, total=total)

    return update, prog.stop


@main.command()
@click.argument("path")
@click.option("-o", "--output", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="Report format; json is the stable contract.")
@click.option("--env", default=None, help="Environment, when PATH is a spec folder or a gen/ folder of environments.")
@click.option("--kueue-version", default=None,
              help="Kueue release to reproduce for plain manifests, e.g. v0.8 [default: the newest supported].")
@click.option("--until", default=None, help="Stop at this time (e.g. 2h), overriding the scenario's until.")
@click.option("--plot", "plot", type=click.Path(path_type=Path), default=None,
              help="Also write a PNG timeline (needs matplotlib).")
def simulate(path: str, fmt: str, env: str | None, kueue_version: str | None, until: str | None,
             plot: Path | None) -> None:
    """Simulate Kueue admission, borrowing and preemption.

    PATH is a Scenario file, a spec folder (with --env), or plain manifests: a folder, a file or `-` (stdin,
    e.g. `kustomize build overlays/prod | kueueplan simulate -`), whose workloads are the load."""
    from kueueplan.report import simulation as report
    from kueueplan.simulate.engine import simulate as run
    from kueueplan.simulate.result import expectation_results, failed_count, result_json

    scenario = _load(path, env, until, kueue_version)
    _warn_rejected(scenario)
    update, stop = _progress_bar()
    try:
        sim = run(scenario, update)
    finally:
        stop()
    result = result_json(sim)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
    elif fmt == "markdown":
        click.echo(report.markdown(sim, result))
    else:
        report.text(sim, result)
    if plot is not None:
        report.plot(sim, result, plot)
    results = expectation_results(sim)
    for f in (line for failures in results for line in failures):
        click.echo(f"expectation failed: {f}", err=True)
    total, failed = len(results), failed_count(results)
    if total and fmt != "json":  # people see the gate's verdict; the JSON contract stays as specified
        click.echo(f"expectations: {total - failed} of {total} passed", err=True)
    if failed:
        sys.exit(1)
