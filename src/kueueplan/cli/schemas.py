"""`kueueplan schemas pull|list`: the CRDs `validate` checks Kueue and KubeRay objects against."""

from __future__ import annotations

from pathlib import Path

import click

from kueueplan.cli import main


@main.group()
def schemas() -> None:
    """Manage the CRD cache used by `kueueplan validate`."""


@schemas.command()
@click.option("--kueue", default="v0.19.2", show_default=True, help="Kueue release tag ('' to skip)")
@click.option("--kuberay", default="v1.7.0", show_default=True, help="KubeRay release tag ('' to skip)")
@click.option("--dest", type=click.Path(file_okay=False), default=None, help="Folder (default: the cache)")
def pull(kueue: str, kuberay: str, dest: str | None) -> None:
    """Download the release CRDs (network access needed)."""
    from kueueplan.validate.crds import pull as run_pull

    for path in run_pull(kueue or None, kuberay or None, Path(dest) if dest else None):
        click.echo(f"wrote {path}")


@schemas.command(name="list")
@click.option("--crds", "crds", multiple=True, type=click.Path(), help="CRD paths (default: the cache)")
def list_(crds: tuple[str, ...]) -> None:
    """Show which CRDs and versions `validate` would use."""
    from kueueplan.validate.crds import cache_dir, default_crd_paths, load_crds

    paths = list(crds) or default_crd_paths()
    if not paths:
        click.echo(f"no CRDs in {cache_dir() / 'crds'}; run `kueueplan schemas pull` or pass --crds")
        return
    for entry in load_crds(paths).describe():
        click.echo(f"{entry['kind']}.{entry['group']}: {', '.join(entry['versions'])}  ({entry['source']})")
