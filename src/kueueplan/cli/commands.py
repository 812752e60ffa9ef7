"""Registers every command module with the `main` group. Add one import per command module."""

import importlib

for _name in ("build", "validate", "simulate", "check", "diff", "graph", "importer", "schemas"):
    try:
        importlib.import_module(f"kueueplan.cli.{_name}")
    except ModuleNotFoundError as err:  # a command not written yet
        if err.name != f"kueueplan.cli.{_name}":
            raise
