"""A file named on the command line that is a symlink out of its repository is refused (exit 2), never read.

In CI the workflow names the paths, but the pull request owns what lies there: `history.yaml -> ~/.kube/config`
would otherwise put a runner's file into a report. Folders were already walked this way; these are the files
given one by one (`diff --load`, `import FILE`, `simulate FILE`, `validate FILE`, `build FILE`, diff sides).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hardening.test_hostile_input import run_cli

SECRET = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: runner-secret-marker, namespace: ns, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {queueName: q, podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]}
"""

COMMANDS = {
    "diff --load": lambda link, repo: ["diff", str(repo / "mk"), str(repo / "mk"), "--load", str(link)],
    "import FILE": lambda link, repo: ["import", str(link), "-o", str(repo / "out")],
    "simulate FILE": lambda link, repo: ["simulate", str(link)],
    "validate FILE": lambda link, repo: ["validate", str(link)],
    "build FILE": lambda link, repo: ["build", str(link), "-o", str(repo / "gen")],
    "diff FILE": lambda link, repo: ["diff", str(link), str(repo / "mk")],
    "validate --policies FILE": lambda link, repo: ["validate", str(repo / "mk"), "--policies", str(link)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_file_linked_out_of_the_repository_is_refused(command: str, tmp_path: Path) -> None:
    outside = tmp_path / "runner" / "secret.yaml"
    outside.parent.mkdir()
    outside.write_text(SECRET)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "mk").mkdir()
    (repo / "mk" / "queue.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: ns}\n"
        "spec: {clusterQueue: cq}\n")
    link = repo / "history.yaml"
    link.symlink_to(outside)
    code, output = run_cli(COMMANDS[command](link, repo), repo)
    assert code == 2, output
    assert "runner-secret-marker" not in output
    assert "history.yaml is a symlink" in output and "outside" in output
    assert not (repo / "out").exists() and not (repo / "gen").exists()


def test_a_file_linked_inside_the_repository_is_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "data").mkdir()
    (repo / "data" / "history.yaml").write_text(SECRET)
    (repo / "mk").mkdir()
    (repo / "mk" / "queue.yaml").write_text(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: ns}\n"
        "spec: {clusterQueue: cq}\n")
    (repo / "history.yaml").symlink_to(repo / "data" / "history.yaml")
    code, output = run_cli(["diff", str(repo / "mk"), str(repo / "mk"), "--load", str(repo / "history.yaml")], repo)
    assert code == 0, output
    assert "1 workload(s) from" in output
