"""Kueue's batch/v1 Job webhook (pkg/controller/jobs/job/job_webhook.go): rules that depend on the release's
feature-gate defaults (AdmissionGatedBy on from v0.19, ElasticJobsViaWorkloadSlices from v0.18)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kueueplan.validate import validate


def _job(annotations: dict[str, str], spec: str = "  parallelism: 8\n  completions: 8\n") -> str:
    ann = "".join(f"    {k}: {v!r}\n" for k, v in annotations.items())
    return ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: sample\n  labels:\n"
            "    kueue.x-k8s.io/queue-name: user-queue\n  annotations:\n" + ann + "spec:\n" + spec +
            "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n"
            "        image: busybox\n")


def _found(tmp_path: Path, text: str, version: str | None = None) -> list[tuple[str, str]]:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    return [(f.rule, f.message) for f in validate([str(path)], policies=[], kueue_version=version).findings
            if f.rule.startswith("KP31")]


@pytest.mark.parametrize("value, problem", [
    ("example.com/a,,example.com/b", "cannot contain empty gate names"),
    ("example.com/a, example.com/a", "duplicate gate name: example.com/a"),
    ("quota-check", "must be a domain-prefixed path"),
    ("Example.com/a", "domain 'Example.com'"),
    ("example.com/a b", "invalid path 'a b'"),
    ("example.com/" + "g" * 60, "at most 63 are allowed"),
])
def test_admission_gated_by_is_checked_from_kueue_0_19(tmp_path: Path, value: str, problem: str) -> None:
    text = _job({"kueue.x-k8s.io/admission-gated-by": value})
    assert any(rule == "KP315" and problem in message for rule, message in _found(tmp_path, text))
    assert _found(tmp_path, text, "v0.18") == []  # the feature gate is off by default before v0.19


def test_good_gates_pass(tmp_path: Path) -> None:
    text = _job({"kueue.x-k8s.io/admission-gated-by": "example.com/quota-check, acme.io/budget/v1"})
    assert _found(tmp_path, text) == []


def test_partial_admission_and_elastic_job_exclude_each_other_from_0_18(tmp_path: Path) -> None:
    text = _job({"kueue.x-k8s.io/job-min-parallelism": "2", "kueue.x-k8s.io/elastic-job": "true"})
    assert [r for r, _ in _found(tmp_path, text)] == ["KP316"]
    assert _found(tmp_path, text, "v0.17") == []
    # workloadslicing.Enabled wants exactly "true"
    assert _found(tmp_path, _job({"kueue.x-k8s.io/job-min-parallelism": "2",
                                  "kueue.x-k8s.io/elastic-job": "True"})) == []


@pytest.mark.parametrize("minimum, parallelism, completions, bad", [
    ("4", 8, 4, True), ("3", 8, 4, False), ("0", 8, 4, True), ("7", 8, 16, False),
])
def test_min_parallelism_against_the_pod_count(tmp_path: Path, minimum: str, parallelism: int, completions: int,
                                               bad: bool) -> None:
    text = _job({"kueue.x-k8s.io/job-min-parallelism": minimum},
                f"  parallelism: {parallelism}\n  completions: {completions}\n")
    found = [message for rule, message in _found(tmp_path, text) if rule in ("KP317", "KP415")] or \
        [f.message for f in validate([str(tmp_path / "job.yaml")], policies=[]).findings if f.rule == "KP415"]
    assert bool(found) == bad, found


def test_completions_equal_parallelism(tmp_path: Path) -> None:
    indexed = "  completionMode: Indexed\n  parallelism: 4\n  completions: 4\n"
    assert _found(tmp_path, _job({"kueue.x-k8s.io/job-completions-equal-parallelism": "true"}, indexed)) == []
    found = _found(tmp_path, _job({"kueue.x-k8s.io/job-completions-equal-parallelism": "yes"}, indexed))
    assert [r for r, _ in found] == ["KP319"] and "must be true or false" in found[0][1]
    found = _found(tmp_path, _job({"kueue.x-k8s.io/job-completions-equal-parallelism": "1"},
                                  "  parallelism: 4\n  completions: 8\n"))
    assert sorted(m.split(" ")[0] for _, m in found) == ["completions", "kueue.x-k8s.io/job-completions-equal-parallelism"]
    assert _found(tmp_path, _job({"kueue.x-k8s.io/job-completions-equal-parallelism": "false"})) == []


def test_validate_needs_no_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    def refuse(*_args, **_kwargs):
        raise AssertionError("validate tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    path = tmp_path / "cq.yaml"
    for api, version in (("v1beta1", "v0.9"), ("v1beta2", "v0.15.2"), ("v1beta2", None)):
        path.write_text(f"apiVersion: kueue.x-k8s.io/{api}\nkind: ClusterQueue\nmetadata:\n  name: cq\nspec:\n"
                        "  queueingStrategy: FIFO\n")
        assert "KP201" in {f.rule for f in validate([str(path)], policies=[], kueue_version=version).findings}


def test_kp415_names_the_bound_that_completions_sets(tmp_path: Path) -> None:
    text = _job({"kueue.x-k8s.io/job-min-parallelism": "9"}, "  parallelism: 8\n  completions: 4\n")
    (tmp_path / "job.yaml").write_text(text)
    [message] = [f.message for f in validate([str(tmp_path / "job.yaml")], policies=[]).findings if f.rule == "KP415"]
    assert "between 1 and 3" in message  # Kueue: "should be between 0 and 3" (podsCount() - 1)
