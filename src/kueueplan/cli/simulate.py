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
from kueueplan.report.escape import one_line


def _load(path: str, env: str | None, until: str | None, kueue_version: str | None = None, seed: int = 0) -> Any:
    """The scenario of a single run: stochastic load (if any) drawn with `seed`, as run 0 of a Monte-Carlo."""
    scenario = _source(path, env, kueue_version).sample(seed, 0)
    _set_until(scenario, until)
    return scenario


def _source(path: str, env: str | None, kueue_version: str | None = None) -> Any:
    from kueueplan.workflow.simulation import source_for_input

    return source_for_input(path, env, kueue_version)


def _set_until(scenario: Any, until: str | None, option: str = "--until") -> None:
    from kueueplan.simulate.scenario import parse_duration

    if until is not None:
        scenario.until = parse_duration(until, option)


def _snapshot(scenario: Any, fmt: str) -> None:
    from kueueplan.report import snapshot
    from kueueplan.simulate.engine import simulate as run

    sim = run(scenario)
    if fmt == "json":
        tables = {title: [dict(zip(header, row)) for row in rows]
                  for title, (header, rows) in snapshot.tables(sim).items()}
        click.echo(json.dumps({"at": sim.now / 1000, "tables": tables}, indent=2))
    elif fmt == "markdown":
        click.echo(snapshot.markdown(sim))
    else:
        click.echo(snapshot.text(sim))


def warn_rejected(scenario: Any) -> None:
    """Objects Kueue would refuse cannot exist on a cluster: say so on stderr (the JSON contract is unchanged)."""
    from kueueplan.validate import webhook_rejections

    objects = list(scenario.manifests)
    seen: set[int | None] = set()
    for t in scenario.workloads:  # copies of one `workloads` entry differ only in name: check one
        if t.group is None or t.group not in seen:
            seen.add(t.group)
            objects.append((t.manifest, scenario.file, t.line))
    # A stochastic entry expands into one plain entry per arrival (no shared group): its copies, all from one
    # line, would each repeat the same warning. One per (file, line, rule), with how many objects it covers.
    found: dict[tuple[Any, Any, str], list[Any]] = {}
    for f in webhook_rejections(objects):
        found.setdefault((f.file, f.line, f.rule), []).append(f)
    for (file, line, rule), fs in found.items():
        f, where = fs[0], f"{file}:{line}" if line else file
        more = f"; {len(fs) - 1} more object(s) of this entry alike" if len(fs) > 1 else ""
        click.echo(one_line(f"warning: {where}: {rule} {f.object}: {f.message} (Kueue would reject this object; "
                            f"the simulation applies it anyway{more})"), err=True)  # names from the PR: one line each


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
@click.option("--runs", type=click.IntRange(1, 100_000), default=1, show_default=True,
              help="Monte-Carlo: simulate N samples of the stochastic load and report distributions.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True,
              help="Fixes every random draw: the same seed gives byte-identical results.")
@click.option("--jobs", type=click.IntRange(1, 1024), default=None,
              help="Processes for --runs (default: every core).")
@click.option("--ray", "ray_address", default=None, metavar="ADDRESS",
              help="Run the --runs samples as Ray tasks on this cluster ('local' starts one here).")
@click.option("--at", "at", default=None, metavar="TIME",
              help="Show the state at this moment (e.g. 90m), as kubectl get clusterqueues/workloads would.")
@click.option("--html", "html_path", type=click.Path(path_type=Path), default=None,
              help="Also write a self-contained HTML report (charts; needs matplotlib).")
def simulate(path: str, fmt: str, env: str | None, kueue_version: str | None, until: str | None,
             plot: Path | None, runs: int, seed: int, jobs: int | None, ray_address: str | None, at: str | None,
             html_path: Path | None) -> None:
    """Simulate Kueue admission, borrowing and preemption.

    PATH is a Scenario file, a spec folder (--env picks one of several environments), or plain manifests: a folder, a file or `-` (stdin,
    e.g. `kustomize build overlays/prod | kueueplan simulate -`), whose workloads are the load."""
    if at is not None:
        if runs > 1 or ray_address is not None or html_path is not None:
            raise click.UsageError("--at shows one run at one moment; drop --runs, --ray and --html")
        scenario = _load(path, env, None, kueue_version, seed)
        declared = scenario.until
        _set_until(scenario, at, "--at")
        warn_rejected(scenario)
        if declared is not None and scenario.until > declared:
            from kueueplan.kube.configuration import format_go_duration

            click.echo(f"note: the scenario stops at {format_go_duration(declared / 1000)} (its until); --at {at} "
                       "runs it that far", err=True)  # 3h0m0s, as the user wrote it, not 10800s
        _snapshot(scenario, fmt)
        return
    if runs > 1 or ray_address is not None or html_path is not None:
        from kueueplan.cli.planning import monte_carlo

        monte_carlo(_source(path, env, kueue_version), fmt, until, runs, seed, jobs, ray_address, html_path)
        return
    from kueueplan.report import simulation as report
    from kueueplan.simulate.engine import simulate as run
    from kueueplan.simulate.result import expectation_results, failed_count, result_json, write_json

    scenario = _load(path, env, until, kueue_version, seed)
    warn_rejected(scenario)
    update, stop = _progress_bar()
    try:
        sim = run(scenario, update)
    finally:
        stop()
    result = result_json(sim)
    if fmt == "json":
        sys.stdout.flush()  # the text layer's, before bytes go under it
        write_json(result, sys.stdout.buffer.write)
    elif fmt == "markdown":
        click.echo(report.markdown(sim, result))
    else:
        report.text(sim, result)
    if plot is not None:
        report.plot(sim, result, plot)
    results = expectation_results(sim)
    for f in (line for failures in results for line in failures):
        click.echo(one_line(f"expectation failed: {f}"), err=True)
    total, failed = len(results), failed_count(results)
    if total and fmt != "json":  # people see the gate's verdict; the JSON contract stays as specified
        click.echo(f"expectations: {total - failed} of {total} passed", err=True)
    if failed:
        sys.exit(1)
