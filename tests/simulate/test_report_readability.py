"""Reports people read: whole workload names at the terminal's real width (and always in a log), readable time
units on the --plot axis, `done` in the Gantt chart only for workloads that finished, and commands that find
the environments a folder holds."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from kueueplan.cli import main
from kueueplan.report import simulation as report
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import load_scenario

REPO = Path(__file__).resolve().parents[2]
LONG = "team-research/very-long-distributed-training-job-name-for-llm-finetune-run"  # 77 characters

SCENARIO = f"""\
apiVersion: kueueplan.io/v1alpha1
kind: Scenario
metadata: {{name: t}}
spec:
  manifests:
  - {{apiVersion: v1, kind: Namespace, metadata: {{name: team-research}}}}
  - {{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {{name: f}}}}
  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {{name: cq}}
    spec:
      namespaceSelector: {{}}
      resourceGroups:
      - coveredResources: [cpu]
        flavors: [{{name: f, resources: [{{name: cpu, nominalQuota: 1}}]}}]
  - {{apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {{namespace: team-research, name: lq}}, spec: {{clusterQueue: cq}}}}
  workloads:
  - at: 0s
    runFor: 2h
    count: 3
    manifest:
      apiVersion: batch/v1
      kind: Job
      metadata: {{name: {LONG.split("/")[1]}, namespace: team-research, labels: {{kueue.x-k8s.io/queue-name: lq}}}}
      spec:
        template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}}}
  - at: 0s
    manifest:
      apiVersion: batch/v1
      kind: Job
      metadata: {{name: too-big, namespace: team-research, labels: {{kueue.x-k8s.io/queue-name: lq}}}}
      spec:
        template: {{spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "5"}}}}}}]}}}}
  until: 8h
"""


@pytest.fixture
def run(tmp_path: Path) -> tuple:
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO)
    sim = simulate(load_scenario(path))
    return sim, result_json(sim), path


def test_a_wide_terminal_shows_whole_workload_names(run: tuple) -> None:
    sim, result, _ = run
    out = io.StringIO()
    report.text(sim, result, Console(file=out, width=200))
    assert all(f"{LONG}-{i}" in out.getvalue() for i in (1, 2, 3)), out.getvalue()
    assert max(len(line) for line in out.getvalue().splitlines()) <= 200
    # the inadmissible workload's message is whole too, below the table
    assert "team-research/too-big: needs 5 cpu" in out.getvalue() and "(nominal 1)" in out.getvalue()


def test_a_narrow_terminal_folds_names_but_never_cuts_them(run: tuple) -> None:
    sim, result, _ = run
    out = io.StringIO()
    report.text(sim, result, Console(file=out, width=120))
    assert "…" not in out.getvalue()
    assert max(len(line) for line in out.getvalue().splitlines()) <= 120
    cells = [line.split("│")[1].strip() for line in out.getvalue().splitlines() if line.startswith("│")]
    assert f"{LONG}-1" in "".join(cells)


def test_a_log_gets_whole_names_and_messages(run: tuple) -> None:
    _, _, path = run
    output = CliRunner().invoke(main, ["simulate", str(path)]).stdout
    assert all(f"{LONG}-{i}" in output for i in (1, 2, 3)) and "…" not in output


def test_a_terminal_uses_its_real_width(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a, **k: __import__("os").terminal_size((213, 50)))
    assert report._console(Tty()).width == 213


def test_the_plot_axis_reads_in_hours_or_minutes(run: tuple) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim, result, _ = run
    fig = report.figure(sim, result, plt)
    fig.canvas.draw()
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text() and low <= t.get_position()[0] <= high]
    plt.close(fig)
    assert ax.get_xlabel() == "time (hours)"
    assert labels and all(re.fullmatch(r"\d+(\.\d+)?h", t) for t in labels), labels
    assert "2h" in labels and "6h" in labels
    assert report.time_axis(40 * 60)[2] == "time (minutes)" and report.time_axis(90)[2] == "time (seconds)"
    assert report.format_time(5400, 3600) == "1.5h" and report.format_time(600, 60) == "10m"


def test_the_gantt_chart_marks_only_finished_runs_done() -> None:
    # In prod the notebook (a RayCluster) is admitted and still running at the end of the run.
    output = CliRunner().invoke(main, ["simulate", str(REPO / "environments"), "--env", "prod",
                                       "-o", "markdown"]).stdout
    chart = output.split("```mermaid", 1)[1].split("```", 1)[0]
    notebook = chart.split("section team-a/notebook\n", 1)[1].split("section", 1)[0]
    assert "run : active, " in notebook and "done" not in notebook, notebook
    assert "run : done, " in chart  # the RayJobs that finished
    assert report.gantt_tag("run", "Preempted") == ""


def test_simulate_of_a_spec_folder_without_env_lists_its_environments() -> None:
    result = CliRunner().invoke(main, ["simulate", str(REPO / "environments")])
    assert result.exit_code == 2
    assert "its environments are dev, prod" in result.stderr and "--env dev" in result.stderr


def test_build_and_check_find_the_spec_in_an_example_folder(tmp_path: Path) -> None:
    example = tmp_path / "skypilot"
    shutil.copytree(REPO / "examples" / "skypilot", example)
    result = CliRunner().invoke(main, ["build", str(example), "-o", str(example / "gen")])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("up to date")  # the committed build, found where it belongs
    check = CliRunner().invoke(main, ["check", str(example), "--no-simulate", "--no-policies"])
    assert f"matches a fresh build" in check.output, check.output
    sim = CliRunner().invoke(main, ["simulate", str(example)])
    assert "its environments are no-preemption, preemption" in sim.stderr
