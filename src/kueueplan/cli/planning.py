"""Capacity planning commands: `simulate --runs N` (Monte-Carlo) and `plan quota` (quota search)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import click

from kueueplan.cli import main


def _progress(total_label: str) -> tuple[Any, Any]:
    """A rich progress bar on stderr, only on a terminal."""
    if not sys.stderr.isatty():
        return None, lambda: None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    prog = Progress(TextColumn(total_label), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=Console(stderr=True), transient=True)
    task = prog.add_task(total_label, total=None)
    prog.start()
    return (lambda done, total: prog.update(task, completed=done, total=total)), prog.stop


def monte_carlo(source: Any, fmt: str, until: str | None, runs: int, seed: int, jobs: int | None,
                ray: str | None, html_path: Path | None = None) -> None:
    from kueueplan.planning.executors import PartialResults, execute
    from kueueplan.simulate.scenario import parse_duration
    from kueueplan.planning.montecarlo import aggregate, failed
    from kueueplan.report import planning as report
    from kueueplan.report.escape import one_line

    if until is not None:
        source = dataclasses.replace(source, until=parse_duration(until, "--until"))
    scenario = source.sample(seed, 0)  # refuses unusable input once, here, with file and line
    from kueueplan.cli.simulate import warn_rejected

    warn_rejected(scenario)  # as a single run does: objects Kueue would refuse, said once (run 0's)
    update, stop = _progress("simulating runs")
    interrupted = False
    try:
        results = execute(source, seed, runs, jobs=jobs, ray=ray, progress=update)
    except PartialResults as partial:
        results, interrupted = partial.finished, True
        if not results:
            stop()
            click.echo("interrupted before any run finished", err=True)
            sys.exit(130)
    finally:
        stop()
    result = aggregate(source, scenario, seed, results)
    if html_path is not None:
        from kueueplan.report.html import report as html_report

        write_report(html_path, html_report(result, results))
    if runs == 1 and fmt == "json":  # one run keeps the simulate contract's object
        _single_json(scenario)
    elif fmt == "json":
        click.echo(json.dumps(result, indent=2, sort_keys=False))
    elif fmt == "markdown":
        click.echo(report.markdown(result))
    else:
        report.text(result)
    if interrupted:
        click.echo(f"interrupted: {len(results)} of {runs} runs finished; the report covers those", err=True)
        sys.exit(130)
    misses = failed(result)
    for e in misses:
        click.echo(f"expectation failed: {one_line(e['expectation'])} held in {e['held']} of {result['runs']} runs "
                   f"({e['probability']:.1%}), needs {e['required']:.0%}", err=True)
    if misses:
        sys.exit(1)


def _single_json(scenario: Any) -> None:
    from kueueplan.simulate.engine import simulate
    from kueueplan.simulate.result import result_json

    click.echo(json.dumps(result_json(simulate(scenario)), indent=2))


def write_report(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder, so a reader never sees half a report."""
    from kueueplan.errors import KueueplanError

    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise KueueplanError(f"cannot write {path}: {err.strerror or err}") from None
    click.echo(f"wrote {path}", err=True)


@main.group()
def plan() -> None:
    """Capacity planning: search quotas against the scenario's expectations, fit a load model to a recorded
    history (see also simulate --runs)."""


@plan.command("quota")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--env", default=None, help="Environment, when PATH is a spec folder.")
@click.option("--vary", "variables", multiple=True, required=True, metavar="CQ/FLAVOR/RESOURCE=LO..HI[:STEP]",
              help="A quota to search (repeat for a trade-off table; the last one is searched per row).")
@click.option("--runs", type=click.IntRange(1, 100_000), default=50, show_default=True,
              help="Monte-Carlo runs per candidate.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True)
@click.option("--jobs", type=click.IntRange(1, 1024), default=None, help="Processes (default: every core).")
@click.option("--ray", "ray_address", default=None, metavar="ADDRESS", help="Run on a Ray cluster ('local': here).")
@click.option("--exhaustive", is_flag=True, help="Judge every candidate instead of bisecting.")
@click.option("--html", "html_path", type=click.Path(path_type=Path), default=None,
              help="Also write a self-contained HTML report of the search and of the answer's runs.")
@click.option("-o", "--output", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True)
def quota(path: Path, env: str | None, variables: tuple[str, ...], runs: int, seed: int, jobs: int | None,
          ray_address: str | None, exhaustive: bool, html_path: Path | None, fmt: str) -> None:
    """The smallest quotas for which every expectation holds with its required probability."""
    from kueueplan.cli.simulate import _source
    from kueueplan.planning.executors import execute
    from kueueplan.planning.search import Search, parse_variable
    from kueueplan.report import planning as report
    from kueueplan.report.escape import one_line

    source = _source(str(path), env)
    from kueueplan.cli.simulate import warn_rejected

    warn_rejected(source.sample(seed, 0))  # refuse unusable input before the first candidate; warn once
    parsed = [parse_variable(v) for v in variables]
    for v in parsed:  # every variable must name a quota of the scenario
        source.with_quota(v.cluster_queue, v.flavor, v.resource, v.quantity(v.values[0]))
    update, stop = _progress("judging candidates")
    try:
        search = Search(source, parsed, seed, lambda s: execute(s, seed, runs, jobs=jobs, ray=ray_address),
                        exhaustive, progress=(lambda n: update(n, None)) if update else None)
        result = search.run()
    finally:
        stop()
    if html_path is not None:
        from kueueplan.report.html import report as html_report

        judged = search.answer()
        write_report(html_path, html_report(judged.result, search.metrics[judged.assignment], result))
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
    elif fmt == "markdown":
        click.echo(report.search_markdown(result))
    else:
        report.search_text(result)
    if all(r["smallest"] is None for r in result["tradeoffs"]):
        click.echo("no candidate meets every expectation", err=True)
        sys.exit(1)


@plan.command("fit")
@click.argument("history", nargs=-1, required=True, type=click.Path(path_type=Path))
def fit_history(history: tuple[Path, ...]) -> None:
    """A stochastic load model fitted to recorded Workloads (`kubectl get workloads.kueue.x-k8s.io -A -o yaml`
    exports, several files being one history), printed as a Scenario's `workloads` entries to paste or edit."""
    import yaml

    from kueueplan.errors import KueueplanError
    from kueueplan.kube import yamlio
    from kueueplan.planning.history import fit, read_history

    for path in history:
        if not path.is_file():
            raise KueueplanError(f"{path}: no such file",
                                 hint="pass `kubectl get workloads.kueue.x-k8s.io -A -o yaml` exports")
        yamlio.refuse_linked_out(path)  # as diff --load and simulate: a file of a pull request may link anywhere
    records = read_history(list(history))
    if not records:
        raise KueueplanError(f"no kueue.x-k8s.io Workload in {', '.join(map(str, history))}",
                             hint="pass `kubectl get workloads.kueue.x-k8s.io -A -o yaml` exports")
    from kueueplan.report.escape import one_line

    model = fit(records)
    for entry in model:
        if "runFor" not in entry:  # every recorded one of its shape was still running or never admitted
            meta = entry["manifest"]["metadata"]
            click.echo(f"warning: {one_line(meta.get('namespace'))}/{one_line(meta['name'])}: no recorded run "
                       "finished, so its arrivals never finish in this model; give it a runFor", err=True)
    click.echo(f"# Fitted by kueueplan plan fit from {len(records)} recorded Workload(s): per namespace, queue "
               "and pod sets,\n# Poisson arrivals at the observed rate over the observed window; run times "
               "log-normal (median, p95),\n# or the recorded ones below five finished runs.")
    click.echo(yaml.safe_dump({"workloads": model}, sort_keys=False), nl=False)
