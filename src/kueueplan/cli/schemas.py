"""`kueueplan schemas pull|list`: the CRDs `validate` checks Kueue and KubeRay objects against."""

from __future__ import annotations

from pathlib import Path

import click

from kueueplan.cli import main


@main.group()
def schemas() -> None:
    """The CRD schemas `kueueplan validate` uses: the built-in pack, and releases fetched with `pull`."""


@schemas.command()
@click.option("--kueue", default=None, help="Kueue release tag, vX.Y.Z ('' to skip) [default: the newest in the pack]")
@click.option("--kuberay", default=None, help="KubeRay release tag, vX.Y.Z ('' to skip) [default: the newest in the pack]")
@click.option("--sha256", "hashes", multiple=True, metavar="FILE=HEX",
              help="Expected SHA-256 of a CRD file (repeatable); required for every file of a release the pack "
                   "does not pin, e.g. --sha256 kueue.x-k8s.io_clusterqueues.yaml=<hex>")
@click.option("--dest", type=click.Path(file_okay=False), default=None, help="Folder (default: the cache)")
def pull(kueue: str | None, kuberay: str | None, hashes: tuple[str, ...], dest: str | None) -> None:
    """Download release CRDs, verified against pinned SHA-256 hashes (network access needed).

    `validate` needs no download for the releases the built-in pack covers (`kueueplan schemas list`); pull a
    release it does not cover, such as a newer one, and `validate` uses it for environments on that release.
    """
    from kueueplan.validate import schemapack
    from kueueplan.validate.pull import parse_hashes, pull as run_pull

    kueue = schemapack.newest("kueue") if kueue is None else kueue
    kuberay = schemapack.newest("kuberay") if kuberay is None else kuberay
    for path in run_pull(kueue or None, kuberay or None, Path(dest) if dest else None, parse_hashes(list(hashes))):
        click.echo(f"wrote {path}")


@schemas.command(name="list")
@click.option("--crds", "crds", multiple=True, type=click.Path(), help="Also list the CRDs in these paths")
def list_(crds: tuple[str, ...]) -> None:
    """Show the releases the built-in pack covers, the releases pulled, and CRDs given with --crds."""
    from kueueplan.validate import schemapack
    from kueueplan.validate.catalog import pulled_dir
    from kueueplan.validate.crds import load_crds

    for project, label in (("kueue", "Kueue"), ("kuberay", "KubeRay"), ("autoscaler", "Cluster Autoscaler")):
        click.echo(f"{label} (schema pack): {', '.join(schemapack.releases(project))}")
        root = pulled_dir(project, "x").parent
        pulled = sorted((p.name for p in root.iterdir() if p.is_dir() and schemapack.RELEASE.fullmatch(p.name)),
                        key=schemapack.release_key) if root.is_dir() else []
        if pulled:
            click.echo(f"{label} (pulled, {root}): {', '.join(pulled)}")
    if crds:
        for entry in load_crds(list(crds)).describe():
            click.echo(f"{entry['kind']}.{entry['group']}: {', '.join(entry['versions'])}  ({entry['source']})")
