"""The command line: thin click wrappers over the pipeline. Each command lives in its own module."""

from __future__ import annotations

import sys
from typing import Any

import click

from kueueplan import __version__
from kueueplan.errors import KueueplanError


class _Group(click.Group):
    """Turns every KueueplanError into a clean message and exit 2, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KueueplanError as err:
            click.echo(f"error: {err}", err=True)
            sys.exit(2)
        except RecursionError:
            click.echo("error: input nests too deeply to process", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="kueueplan")
def main() -> None:
    """Plan, validate and simulate Kueue and KubeRay batch queueing as code."""


def _register() -> None:
    # Imported here so each command module can import from the package without cycles.
    from kueueplan.cli import commands  # noqa: F401


_register()
