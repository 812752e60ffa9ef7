"""Every input limit triggers, with exit 2 and a message; real work of Kueue's large-scale shape fits under them.

Timings are not asserted here (benchmarks/bench_limits.py prints them); a SIGALRM guard turns a regression
into a failure instead of a hung suite.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.kube import yamlio
from kueueplan.kube.yamlio import LimitError, load_text
from kueueplan.validate import celcost
from kueueplan.validate.regex import RegexError, compile_regex

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
import bench_limits  # noqa: E402  (the generators the benchmark measures)


@pytest.fixture(autouse=True)
def guard() -> Iterator[None]:
    """Fail, rather than hang, if a limit stops working (a hang is what these inputs used to cause)."""
    def expired(*_: object) -> None:
        raise TimeoutError("did not finish within 60 s: a limit is not working")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _validate(tmp_path: Path, *args: str) -> tuple[int, str]:
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, ["validate", *args])
    finally:
        os.chdir(cwd)
    assert "Traceback" not in result.output and (result.exception is None or isinstance(result.exception,
                                                                                          SystemExit)), result.output
    return result.exit_code, result.output


# --------------------------------------------------------------------------- nodes, aliases, depth


def test_kueues_large_scale_shape_fits_well_under_the_node_limit() -> None:
    text = bench_limits.perf_scenario_text()
    [doc] = load_text(text, "scenario.yaml")
    data = doc.data
    assert len([m for m in data["spec"]["manifests"] if m["kind"] == "ClusterQueue"]) == 1000
    assert sum(w["count"] for w in data["spec"]["workloads"]) == 50_000
    assert 1.5e6 < len(text) < 3e6  # the 2.4 MB of the issue, give or take formatting
    assert yamlio._node_bound(text) < yamlio.MAX_NODES  # an upper bound of its nodes: no exact count needed
    assert bench_limits._nodes(text) < yamlio.MAX_NODES / 4  # room to spare


def test_a_flat_list_over_the_node_limit_is_exit_2(tmp_path: Path) -> None:
    # Flow style: two bytes a node, so the default limit is crossed with a 2 MB file.
    (tmp_path / "flat.yaml").write_text("[" + "1," * (yamlio.MAX_NODES + 10) + "1]\n")
    code, output = _validate(tmp_path, "flat.yaml")
    assert code == 2 and f"more than {yamlio.MAX_NODES:,} YAML nodes" in output and "flat.yaml" in output, output


def test_the_node_limit_counts_every_document_of_a_file(monkeypatch) -> None:
    monkeypatch.setattr(yamlio, "MAX_NODES", 1000)
    docs = "".join(f"---\nitems: [{', '.join(['x'] * 100)}]\n" for _ in range(20))  # 20 x 103 nodes
    with pytest.raises(LimitError, match="more than 1,000 YAML nodes"):
        load_text(docs, "many.yaml")
    load_text(docs.split("---\n", 10)[-1].split("---\n")[0], "one.yaml")  # one document is fine


def test_too_many_aliases_is_exit_2(tmp_path: Path) -> None:
    text = "a: &a {x: 1}\nb: [" + ", ".join(["*a"] * (yamlio.MAX_ALIASES + 1)) + "]\n"
    (tmp_path / "aliases.yaml").write_text(text)
    code, output = _validate(tmp_path, "aliases.yaml")
    assert code == 2 and "aliases" in output, output
    load_text("a: &a {x: 1}\nb: [" + ", ".join(["*a"] * 100) + "]\n")  # a few are fine


@pytest.mark.parametrize("command", ["validate", "build", "check"])
def test_limits_are_exit_2_in_every_command(tmp_path: Path, command: str) -> None:
    spec = tmp_path / "environments"
    spec.mkdir()
    (spec / "bomb.yaml").write_text(bench_limits.ALIAS_BOMB)
    result = CliRunner().invoke(main, [command, str(spec)])
    assert result.exit_code == 2 and "alias bomb" in result.output, result.output


# --------------------------------------------------------------------------- line lookups


def test_line_of_the_document_itself_parses_nothing_again(monkeypatch) -> None:
    [doc] = load_text("# c\nkind: X\nspec:\n  a: 1\n")
    monkeypatch.setattr(yamlio, "_ruamel_safe", lambda: pytest.fail("composed the document again"))
    monkeypatch.setattr(yamlio, "_locate", lambda *a: pytest.fail("walked the document again"))
    assert doc.line_of(()) == 2


def test_line_lookups_in_a_large_document_locate_one_path_and_agree(monkeypatch) -> None:
    monkeypatch.setattr(yamlio, "POSITIONS_FULL_BYTES", 50_000)  # the same route as a 0.5 MB document
    items = "".join(f"  - name: item-{i}\n    value: {i}\n" for i in range(3_000))
    text = f"kind: Big\nspec:\n  flag: true\nitems:\n{items}tail:\n  last: 1\n"
    assert len(text) > yamlio.POSITIONS_FULL_BYTES
    [doc] = load_text(text)
    monkeypatch.setattr(yamlio, "_ruamel_safe", lambda: pytest.fail("composed the whole large document"))
    assert doc.line_of(("items", 1_234, "value")) == 4 + 2 * 1_234 + 2
    assert doc.column_of(("items", 1_234, "value")) == 5
    assert doc.line_of(("tail", "last")) == 4 + 6_000 + 2
    assert doc.line_of(("spec", "missing", "deeper")) == 2  # the nearest existing ancestor
    assert doc.line_of(("nowhere",)) == 1


def test_locate_agrees_with_the_full_map_on_the_demo_platform() -> None:
    for path in sorted((REPO / "environments").rglob("*.yaml")):
        text = path.read_text()
        for index, _ in enumerate(yamlio._spans(text)):
            for key, where in yamlio._positions(text, index).items():
                if key:
                    assert yamlio._locate(text, index, key) == where, (path, index, key)


# --------------------------------------------------------------------------- regexes


def test_policy_regexes_match_in_linear_time(tmp_path: Path) -> None:
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "p.yaml").write_text(bench_limits.REDOS_POLICY)
    (tmp_path / "ns.yaml").write_text(bench_limits.REDOS_NAMESPACE)
    code, output = _validate(tmp_path, "ns.yaml", "--policies", "policy", "--fail-on", "info")
    assert code == 1 and "naming convention" in output, output  # checked, not hung


def test_patterns_re2_refuses_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(RegexError, match="not an RE2 regular expression"):
        compile_regex(r"(a)\1")
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "p.yaml").write_text(bench_limits.REDOS_POLICY.replace("^(a+)+$", r"^(?=a)a$"))
    (tmp_path / "ns.yaml").write_text(bench_limits.REDOS_NAMESPACE)
    code, output = _validate(tmp_path, "ns.yaml", "--policies", "policy")
    assert code == 2 and "RE2" in output, output


def test_crd_patterns_use_re2(tmp_path: Path) -> None:
    assert compile_regex("^(?i)abc$").search("ABC")  # Go's syntax, as the API server reads it
    assert compile_regex("^(a+)+$").search("a" * 100_000 + "b") is None


# --------------------------------------------------------------------------- CRDs: CEL cost, aliases


def test_nested_comprehensions_over_unbounded_lists_are_refused_before_evaluation(tmp_path: Path) -> None:
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "crd.yaml").write_text(
        bench_limits.crd("", "self.l.all(a, self.l.all(b, self.l.all(c, a + b + c >= 0)))"))
    (tmp_path / "obj.yaml").write_text(bench_limits.bomb_object(3000))
    code, output = _validate(tmp_path, "obj.yaml", "--crds", "crds")
    assert code == 2 and "estimated cost" in output and "crd.yaml" in output and "maxItems" in output, output


def test_bounded_comprehensions_pass_and_are_evaluated(tmp_path: Path) -> None:
    (tmp_path / "crds").mkdir()
    bounded = "              l: {type: array, maxItems: 100, items: {type: integer}}\n"
    text = bench_limits.crd("", "self.l.all(a, self.l.all(b, a + b < 150))").replace(
        "              l: {type: array, items: {type: integer}}\n", bounded)
    (tmp_path / "crds" / "crd.yaml").write_text(text)
    (tmp_path / "obj.yaml").write_text(bench_limits.bomb_object(3).replace("[1,1,1]", "[1,100,70]"))
    code, output = _validate(tmp_path, "obj.yaml", "--crds", "crds")
    assert code == 1 and "failed rule" in output, output  # 100 + 70 >= 150: the rule ran and failed


def test_a_list_past_its_max_items_runs_no_rule_bounded_by_it(tmp_path: Path) -> None:
    """The cost estimate trusts maxItems; a value far past it must not run the rule (Kueue's Topology has a
    comprehension over levels inside one over levels, maxItems 16: 100,000 levels took hours)."""
    (tmp_path / "crds").mkdir()
    bounded = "              l: {type: array, maxItems: 100, items: {type: integer}}\n"
    text = bench_limits.crd("", "self.l.all(a, self.l.all(b, a + b < 150))").replace(
        "              l: {type: array, items: {type: integer}}\n", bounded)
    (tmp_path / "crds" / "crd.yaml").write_text(text)
    (tmp_path / "obj.yaml").write_text(bench_limits.bomb_object(30_000))
    code, output = _validate(tmp_path, "obj.yaml", "--crds", "crds")
    assert code == 1 and "must have at most 100 items (has 30000)" in output and "failed rule" not in output, output


def test_a_topology_with_100000_levels_is_validated_in_seconds(tmp_path: Path) -> None:
    levels = "".join(f"  - nodeLabel: example.com/l{i}\n" for i in range(100_000))
    (tmp_path / "topology.yaml").write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata:\n"
                                            f"  name: deep\nspec:\n  levels:\n{levels}")
    code, output = _validate(tmp_path, "topology.yaml")
    assert code == 1 and "spec.levels: must have at most 16 items (has 100000)" in output, output


def test_the_cost_estimate_accepts_every_rule_of_the_upstream_crds(shared_dir: Path) -> None:
    from kueueplan.validate.crds import _parse_cached

    seen = 0
    for path in sorted((shared_dir / "upstream").rglob("*.yaml")):
        for doc in _parse_cached(path):
            for version in doc["spec"]["versions"]:
                schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
                celcost.check_schema(schema)
                seen += 1
    assert seen > 10


def test_an_alias_bomb_in_a_crd_file_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "crd.yaml").write_text(bench_limits.crd("") + "---\n" + bench_limits.ALIAS_BOMB)
    (tmp_path / "obj.yaml").write_text(bench_limits.bomb_object(3))
    code, output = _validate(tmp_path, "obj.yaml", "--crds", "crds")
    assert code == 2 and "alias bomb" in output and "crd.yaml" in output, output
