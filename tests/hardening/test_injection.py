"""PR-controlled names reach the PR comment (Markdown) and the CI log (`-o github`, the Action's step logs).

A hostile pull request names objects, fields and files so as to mention people, inject HTML and links, break out
of code spans, tables and fences, or print `::error::` / `::add-mask::` workflow commands into the log. Every
rendering is fed such names here and must show them as inert text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner
from markdown_it import MarkdownIt

from kueueplan.cli import main
from kueueplan.report import check as check_report
from kueueplan.report import diff as diff_report
from kueueplan.report.escape import gh_data, md_code, md_text, stop_commands
from kueueplan.validate.finding import Finding
from kueueplan.workflow.check import CheckReport, Drift, EnvSimulation
from kueueplan.workflow.diff import DiffReport, EnvDiff, ObjectChange, WorkloadDelta
from kueueplan.workflow.quotas import Limits, QuotaChange, QuotaKey

HOSTILE = ("x`y``z | @alice @org/team <img src=x onerror=alert(1)> <script>s</script> [click](https://evil.example) "
           "www.evil.example **bold** ~~gone~~ $x^2$\n::error::pwned\r\n::add-mask::secret\n```\n# heading\n> quote")
BENIGN = "benign"
GFM = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _tags(html: str) -> list[str]:
    return re.findall(r"</?[a-z0-9]+", html)


def assert_inert_markdown(md: str, benign_md: str | None = None) -> None:
    """`md` renders to exactly the HTML structure that the same report with benign names renders to."""
    html = GFM.render(md)
    if benign_md is not None:
        assert _tags(html) == _tags(GFM.render(benign_md))
    else:
        assert set(_tags(html)) <= {"<p", "</p", "<code", "</code", "<table", "</table", "<thead", "</thead", "<tbody",
                                    "</tbody", "<tr", "</tr", "<th", "</th", "<td", "</td"}, _tags(html)
    text = re.sub(r"<code[^>]*>.*?</code>", "", html, flags=re.S)  # GitHub links and mentions nothing in code
    assert not re.search(r"@(alice|org)", text), "a mention survived"
    assert "https://" not in text and "www.evil" not in text, "an autolink survived"
    for line in md.splitlines():
        assert not line.lstrip().startswith("::"), f"workflow command in the comment: {line!r}"
        assert not line.startswith(("# heading", "> quote", "```\n")), line
    # Every table keeps its columns: no name added or removed a cell.
    for table in re.findall(r"<table>.*?</table>", html, re.S):
        rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)
        assert len({len(re.findall(r"<t[hd][ >]", r)) for r in rows}) == 1, table


def test_escape_helpers_make_text_inert() -> None:
    assert_inert_markdown(md_text(HOSTILE))
    assert_inert_markdown(md_code(HOSTILE))
    assert_inert_markdown("| a |\n|---|\n| " + md_code(HOSTILE, table=True) + " |\n")
    assert_inert_markdown("| a |\n|---|\n| " + md_text(HOSTILE) + " |\n")
    # The code span shows the text itself (newlines aside), not something else.
    assert GFM.renderInline(md_code("a``b")) == "<code>a``b</code>"


def _diff(HOSTILE: str) -> str:  # noqa: N803 - the same report with any name
    env = EnvDiff(
        env=HOSTILE,
        quotas=[QuotaChange(QuotaKey("ClusterQueue", HOSTILE, HOSTILE, HOSTILE), Limits(8), Limits(2), team=HOSTILE)],
        objects=[ObjectChange(("ClusterQueue", "", HOSTILE), "changed", (HOSTILE, "spec." + HOSTILE))],
        workloads=[WorkloadDelta(HOSTILE, HOSTILE, "inadmissible", HOSTILE, HOSTILE, message=HOSTILE,
                                 blocking=True)],
        broken_expectations=[HOSTILE], simulated=True)
    return diff_report.markdown(DiffReport(base="a", head="b", envs=[env]))


def _check(HOSTILE: str) -> str:  # noqa: N803
    report = CheckReport(spec_dir="environments", gen_dir="gen", gen_checked=True, drift=[Drift(HOSTILE, "missing")],
                         findings=[Finding("KP101", "error", HOSTILE, 3, HOSTILE, HOSTILE)],
                         simulations=[EnvSimulation(HOSTILE, workloads=1, expectations=1, failures=[HOSTILE])])
    return check_report.markdown(report)


def test_diff_and_check_markdown_with_hostile_names_are_inert() -> None:
    md = _diff(HOSTILE)
    assert md.startswith(diff_report.COMMENT_MARKER) and "```mermaid" in md
    assert_inert_markdown(md, _diff(BENIGN))
    assert_inert_markdown(_check(HOSTILE), _check(BENIGN))


def test_diff_text_with_hostile_names_keeps_each_on_its_line() -> None:
    """The text report goes to CI logs: a name with a newline must not start a `::error::` line there."""
    def text(name: str) -> str:
        env = EnvDiff(
            env=name,
            quotas=[QuotaChange(QuotaKey("ClusterQueue", name, name, name), Limits(8), Limits(2), team=name)],
            objects=[ObjectChange(("LocalQueue", name, name), "added", ())],
            workloads=[WorkloadDelta(name, name, "inadmissible", name, name, message=name, blocking=True)],
            broken_expectations=[name], simulated=True)
        return diff_report.text(DiffReport(base="a", head="b", envs=[env]))

    hostile, benign = text(HOSTILE), text(BENIGN)
    checked = check_report.text(CheckReport(
        spec_dir="environments", gen_dir="gen", gen_checked=True, drift=[Drift(HOSTILE, "stale")],
        findings=[Finding("KP101", "error", HOSTILE, 3, HOSTILE, HOSTILE)],
        simulations=[EnvSimulation(HOSTILE, workloads=1, expectations=1, failures=[HOSTILE])]))
    assert "pwned" in checked and not any(line.lstrip().startswith("::") for line in checked.splitlines()), checked
    assert "pwned" in hostile
    assert len(hostile.splitlines()) == len(benign.splitlines()), hostile
    assert not any(line.lstrip().startswith("::") for line in hostile.splitlines()), hostile


def test_errors_and_import_notes_keep_hostile_names_on_one_line(tmp_path: Path) -> None:
    """Exit-2 errors name the file (whose name comes from the PR); import lists what it skipped by name."""
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "x\n::error::pwned.yaml").write_text("a: [\n")
    for args in (["import", str(bad), "-o", str(tmp_path / "out")], ["validate", str(bad)]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code in (1, 2) and "pwned" in out.output, out.output
        assert not any(line.startswith("::") for line in out.output.splitlines()), out.output
    names = tmp_path / "names"
    names.mkdir()
    (names / "q.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
        "  namespaceSelector: {}\n  admissionChecks: [\"ac\\n::error::check\"]\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"cm\\n::error::cm\", namespace: ns}\n")
    out = CliRunner().invoke(main, ["import", str(names), "-o", str(tmp_path / "spec")])
    assert out.exit_code == 1 and "::error::check" in out.output and "::error::cm" in out.output, out.output
    assert not any(line.startswith("::") for line in out.output.splitlines()), out.output


def test_simulate_text_of_hostile_topology_and_multikueue_names_keeps_each_on_its_line() -> None:
    """Names of today's kinds (Topology, MultiKueueConfig/Cluster, checks) reach the rejected-object warnings
    and the simulation's not-modelled warnings, both printed to the CI log."""
    out = CliRunner().invoke(main, ["simulate", str(Path(__file__).parent / "hostile-tas-multikueue.yaml")])
    assert out.exit_code == 0, out.output
    assert out.output.count("::error::") >= 4, out.output
    assert not any(line.lstrip().startswith(("::", "}")) for line in out.output.splitlines()), out.output


def test_validate_github_output_with_hostile_names_prints_no_extra_command(tmp_path: Path) -> None:
    hostile = "evil\n::error::pwned\r\n::add-mask::secret%0A::warning::x"
    manifest = tmp_path / f"{hostile}.yaml"  # file names, too, come from the pull request
    manifest.write_text("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: q\n"
                        f"  namespace: team-a\nspec:\n  clusterQueue: {json.dumps(hostile)}\n")
    out = CliRunner().invoke(main, ["validate", str(manifest), "-o", "github", "--fail-on", "info"])
    assert out.exit_code in (0, 1), out.output
    lines = out.output.splitlines()
    assert len(lines) >= 2, "expected annotations"
    # One annotation per line, each a command kueueplan meant; the names are escaped inside them.
    assert all(re.match(r"^::(error|warning|notice) file=[^:,\r\n]*,line=\d+,title=[^\r\n]*::", line)
               for line in lines), lines
    assert sum("pwned" in line for line in lines) >= 2 and "%0A" in out.output


def test_log_output_is_fenced_with_a_random_stop_token() -> None:
    a, b = stop_commands("::error::x\n"), stop_commands("::error::x\n")
    token = a.splitlines()[0].removeprefix("::stop-commands::")
    assert len(token) == 32 and a.splitlines()[-1] == f"::{token}::" and a != b
    assert gh_data("a%b\r\n::error::c") == "a%25b%0D%0A::error::c"


def _simulate_markdown(tmp_path: Path, name: str) -> str:
    import yaml

    case = yaml.safe_load((Path(__file__).parents[1] / "simulate" / "scenarios" / "cohort-object-quota.yaml")
                          .read_text())
    scenario = case["scenario"]
    scenario["metadata"]["name"] = name  # free text in the contract, echoed in the report
    path = tmp_path / f"{len(name)}.yaml"
    path.write_text(yaml.safe_dump(scenario))
    out = CliRunner().invoke(main, ["simulate", str(path), "-o", "markdown"])
    assert out.exit_code in (0, 1), out.output
    return out.output


def test_simulate_markdown_with_a_hostile_scenario_name_is_inert(tmp_path: Path) -> None:
    md = _simulate_markdown(tmp_path, HOSTILE)
    assert_inert_markdown(md, _simulate_markdown(tmp_path, BENIGN))
    gantt = md.split("```mermaid", 1)[1].split("```", 1)[0]
    assert "\n    title " in gantt and all(":" not in line for line in gantt.splitlines() if "title" in line)
