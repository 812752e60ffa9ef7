"""`kueueplan import MANIFEST_DIR -o SPEC_DIR`: adopt kueueplan from existing Kueue / KubeRay manifests."""

from __future__ import annotations

from pathlib import Path

import click

from kueueplan.cli import main
from kueueplan.workflow.importer import import_manifests, write_spec
from kueueplan.workflow.manifests import load_documents


@main.command(name="import")
@click.argument("manifests", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Spec folder to write.")
@click.option("--env", default="default", show_default=True, help="Name of the Environment document to create.")
@click.option("--force", is_flag=True, help="Write into a folder that already holds YAML files.")
def importer(manifests: tuple[Path, ...], out_dir: Path, env: str, force: bool) -> None:
    """Turn Kueue/KubeRay manifests (files, folders or `kubectl get -o yaml` exports) into a spec folder."""
    result = import_manifests(load_documents(manifests), env)
    for path in write_spec(result, out_dir, force):
        click.echo(f"wrote {path}")
    for reason in result.skipped:
        click.echo(f"skipped: {reason}", err=True)
