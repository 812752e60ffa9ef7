"""`kueueplan build [SPEC_DIR] -o OUT_DIR`: render every environment's manifests."""

from __future__ import annotations

import click

from kueueplan.cli import main


@main.command()
@click.argument("spec_dir", default="environments", type=click.Path(file_okay=True, dir_okay=True))
@click.option("-o", "--output", "out_dir", default="gen", show_default=True, type=click.Path(file_okay=False),
              help="Folder to write OUT_DIR/<env>/ into")
@click.option("--env", "envs", multiple=True, help="Only these environments (repeatable)")
@click.option("--argocd", is_flag=True, help="Also write an Argo CD Application per environment")
@click.option("--flux", is_flag=True, help="Also write a Flux Kustomization per environment")
@click.option("--helm-values", is_flag=True,
              help="Also write kueue-helm-values.yaml (managerConfig.controllerManagerConfigYaml for Kueue's Helm "
                   "chart) for each environment that declares a configuration")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on success")
def build(spec_dir: str, out_dir: str, envs: tuple[str, ...], argocd: bool, flux: bool, helm_values: bool,
          quiet: bool) -> None:
    """Compile the spec in SPEC_DIR (default environments/) into Kueue and KubeRay manifests."""
    from kueueplan.emit.build import build as run_build

    result = run_build(spec_dir, out_dir, list(envs) or None, argocd=argocd, flux=flux, helm_values=helm_values)
    if quiet:
        return
    for env in result.environments:
        click.echo(f"{out_dir}/{env}/: {result.objects[env]} objects")
    if not result.changed:
        click.echo("up to date")
    elif len(result.changed) <= 5:
        click.echo(f"{len(result.changed)} file(s) changed: {', '.join(result.changed)}")
    else:
        click.echo(f"{len(result.changed)} file(s) changed")
