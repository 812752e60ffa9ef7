"""`simulate -o json` is written by orjson, laid out as `json.dumps(result, indent=2)` would lay it out: the same
text on every result whose floats are times (the contract's), and the standard library's own text wherever orjson
would write otherwise (integers past 64 bits, non-ASCII text)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.simulate.result import dumps

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((REPO / "tests" / "simulate" / "scenarios").glob("*.yaml"))[:40] + sorted(
    REPO.glob("examples/*/*scenario*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_output_is_json_dumps_indent_2_text(path: Path) -> None:
    out = CliRunner().invoke(main, ["simulate", str(path), "-o", "json"])
    if out.exit_code == 2:  # a suite scenario that is meant to be refused: no JSON
        assert not out.stdout
        return
    assert out.stdout == json.dumps(json.loads(out.stdout), indent=2) + "\n"


def test_the_demo_platform_output_is_json_dumps_indent_2_text() -> None:
    out = CliRunner().invoke(main, ["simulate", str(REPO / "environments"), "--env", "prod", "-o", "json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert len(result["workloads"]) > 5 and result["events"]
    assert out.stdout == json.dumps(result, indent=2) + "\n"


@pytest.mark.parametrize("value", [
    {"quantity": 2 ** 70, "list": [1, -(2 ** 65)]},  # orjson refuses integers past 64 bits
    {"message": "team-\u00e9t\u00e9 \u0085\u009b[31m \u2028"},  # orjson would write UTF-8, C1 controls raw
    {"empty": [], "nested": {"a": {}, "b": [[], {"c": None}]}, "flag": True, "time": 1.5},
    # lists are written a block at a time: blocks either side of one the standard library writes
    {"events": [{"at": i, "workload": "team-\u00e9" if i == 2500 else "a"} for i in range(4500)], "last": {}},
    {}, {"events": [{"at": 1}]},
])
def test_what_orjson_would_write_otherwise_is_the_standard_librarys_text(value: dict) -> None:
    text = dumps(value)
    assert text == json.dumps(value, indent=2)
    assert text.isascii() and json.loads(text) == value


def test_small_floats_keep_their_value() -> None:
    """orjson writes 0.00001 where repr writes 1e-05: the same number (no result has such a float today)."""
    value = {"share": 1e-05, "weights": [2.5e-05, 0.1 + 0.2, 1e16]}
    assert json.loads(dumps(value)) == value
