"""`kueueplan import MANIFEST_DIR -o SPEC_DIR`: adopt kueueplan from existing Kueue / KubeRay manifests."""

from __future__ import annotations

from pathlib import Path

import click

from kueueplan.cli import main
from kueueplan.errors import KueueplanError
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
    docs = load_documents(manifests)
    if not docs:
        raise KueueplanError("no Kubernetes objects found to import", file=str(manifests[0]),
                             hint="pass the folder or files that hold your Kueue / KubeRay manifests")
    result = import_manifests(docs, env)
    if not any(d.get("kind") != "Environment" for file_docs in result.files.values() for d in file_docs):
        for reason in result.skipped:
            click.echo(f"skipped: {reason}", err=True)
        raise KueueplanError("none of the objects can be imported into a kueueplan spec", file=str(manifests[0]),
                             hint="import reads Kueue objects (ClusterQueue, LocalQueue, ResourceFlavor, ...), "
                             "Namespaces and RayJob / RayCluster / Job / Pod manifests")
    for path in write_spec(result, out_dir, force):
        click.echo(f"wrote {path}")
    for reason in result.skipped:
        click.echo(f"skipped: {reason}", err=True)
