"""The command line: thin click wrappers over the pipeline. Each command lives in its own module."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from kueueplan import __version__
from kueueplan.errors import KueueplanError


# command name -> module under kueueplan.cli; imported only when that command runs, so `validate` does not
# pay for the simulator's or the diff renderer's imports on every CI invocation.
COMMAND_MODULES = {"build": "build", "validate": "validate", "simulate": "simulate", "check": "check",
                   "diff": "diff", "graph": "graph", "import": "importer", "schemas": "schemas",
                   "plan": "planning"}


class _Group(click.Group):
    """Loads commands lazily and turns every KueueplanError into a clean message and exit 2, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMAND_MODULES) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            importlib.import_module(f"kueueplan.cli.{COMMAND_MODULES[cmd_name]}")
        return self.commands.get(cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KueueplanError as err:
            click.echo(_one_error(err), err=True)
            sys.exit(2)
        except RecursionError:
            click.echo("error: input nests too deeply to process", err=True)
            sys.exit(2)


def _one_error(err: KueueplanError) -> str:
    """`error: file:line: message` and its hint, each on one line: file, object and field names in them come
    from the pull request, and a newline there could start a '::error::' workflow command in a CI log."""
    from kueueplan.report.escape import one_line

    loc = err.location()
    text = one_line(f"error: {loc}: {err.message}" if loc else f"error: {err.message}")
    return f"{text}\n  hint: {one_line(err.hint)}" if err.hint else text


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="kueueplan")
def main() -> None:
    """Plan, validate and simulate Kueue and KubeRay batch queueing as code."""


def run() -> None:
    """The console script and `python -m kueueplan`: `main`, then the process ends without the interpreter's
    teardown, which would free a big run's objects one by one for nothing (about 0.7 s of CPU after simulating
    Kueue's large-scale input). Not while Ray or worker processes run: their exit hooks stop them."""
    import multiprocessing
    import os

    try:
        main()
    except SystemExit as done:
        if "ray" in sys.modules or multiprocessing.active_children():
            raise
        code = done.code
        if not isinstance(code, int):  # SystemExit's own rules: None is success, anything else is printed
            if code is not None:
                print(code, file=sys.stderr)
            code = 0 if code is None else 1
        for stream in (sys.stdout, sys.stderr):
            try:
                if stream is not None:  # None: the descriptor was closed when Python started (`>&-`)
                    stream.flush()
            except OSError:  # e.g. a closed pipe: what the interpreter's own exit reports
                code = 120
        os._exit(code)

