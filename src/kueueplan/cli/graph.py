"""`kueueplan graph [PATH]`: the queue topology as Mermaid or Graphviz DOT."""

from __future__ import annotations

from pathlib import Path

import click

from kueueplan.cli import main
from kueueplan.report.graph import dot, mermaid
from kueueplan.workflow.graph import build_topology
from kueueplan.workflow.sources import load_side, pick_env


@main.command()
@click.argument("path", type=click.Path(path_type=Path), required=False)
@click.option("-f", "--format", "fmt", type=click.Choice(["mermaid", "dot"]), default="mermaid", show_default=True)
@click.option("--env", default=None, help="Environment to draw (spec folders, or gen/ with one folder per env).")
def graph(path: Path | None, fmt: str, env: str | None) -> None:
    """Draw flavors, cohorts, ClusterQueues (with quotas), LocalQueues, namespaces, admission checks (MultiKueue
    configs and clusters behind them) and the Topologies behind TAS flavors.

    PATH is a spec folder or rendered manifests (a folder or a file); default environments/.
    """
    path = path or Path("environments")
    side = load_side(path, env)
    topo = build_topology(side.cluster(pick_env(side, env)))
    click.echo(mermaid(topo) if fmt == "mermaid" else dot(topo), nl=False)
