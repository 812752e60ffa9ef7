"""The command line: thin click wrappers over the pipeline. Each command lives in its own module."""

from __future__ import annotations

import errno
import importlib
import os
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
    Kueue's large-scale input). Not while Ray or worker processes run: their exit hooks stop them. Output that
    cannot be written (a full disk) is a clear error and exit 2, never a traceback; a reader that went away
    (`| head`) ends it with exit 1, quietly, as click does."""
    import multiprocessing

    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:  # closed when Python started (`>&-`): what is written there goes nowhere
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - for the whole process
    try:
        main()
        code: int = 0  # not reached: main() ends in SystemExit
    except SystemExit as done:
        code = _exit_code(done.code)
    except OSError as err:  # writing the output failed (click turns a closed pipe into exit 1 itself)?
        try:
            sys.stdout.flush()
        except OSError:
            code = _output_failed(err)
        else:
            raise  # not the output's: a fault the traceback should show
    try:
        sys.stdout.flush()
    except OSError as err:
        code = code or _output_failed(err)
    try:
        sys.stderr.flush()
    except OSError:
        code = code or 120  # what the interpreter's own exit reports when its last flush fails
    if "ray" in sys.modules or multiprocessing.active_children():
        sys.exit(code)
    os._exit(code)


def _exit_code(code: object) -> int:
    """SystemExit's own rules: None is success, an int is the status, anything else is printed and is 1."""
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)
    return 1


def _output_failed(err: OSError) -> int:
    """The exit code when stdout cannot take the output: 1 for a reader that went away, else 2 with the reason;
    what stays in the buffer is dropped so that nothing tries to write it again."""
    sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the rest of the process
    if err.errno == errno.EPIPE:
        return 1
    try:
        print(f"error: cannot write the output: {err.strerror or err}", file=sys.stderr, flush=True)
    except OSError:
        pass
    return 2
