"""Replaying a recorded history (kubectl's export of Workloads) under the quotas it ran with.

The history in fixtures/history-besteffort.yaml was written by hand to follow Kueue v0.19's rules on one 4-GPU
ClusterQueue with BestEffortFIFO and no preemption:
- heads are ordered by priority, then creation time (pkg/cache/queue: queueOrderingFunc / workload.Ordering);
- with BestEffortFIFO a head that does not fit is set aside as inadmissible and the next one may be admitted
  (pkg/cache/queue/cluster_queue.go requeueIfNotPresent; StrictFIFO keeps it at the head instead);
- finished workloads release their quota and inadmissible heads are retried (pkg/controller/core).
So w4 (priority 100, 4 GPUs) waits while the smaller w3 and w5 pass it; the recorded order is w1 w2 w3 w5 w4.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.planning.history import fit, read_history

FIXTURES = Path(__file__).parent / "fixtures"
RECORDED = ["job-w1-4f2a1", "job-w2-9c0d2", "job-w3-77be1", "job-w5-5d3c8", "job-w4-1a9e3"]


def _replay(tmp_path: Path, strategy: str = "BestEffortFIFO") -> dict:
    for name in ("history-besteffort.yaml", "replay-besteffort.yaml"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    (tmp_path / ".git").mkdir()
    scenario = tmp_path / "replay-besteffort.yaml"
    scenario.write_text(scenario.read_text().replace("BestEffortFIFO", strategy))
    out = CliRunner().invoke(main, ["simulate", str(scenario), "-o", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def _admitted(result: dict) -> list[str]:
    return [e["workload"].split("/")[1] for e in result["events"] if e["type"] == "Admitted"]


def test_replay_reproduces_the_recorded_admission_order(tmp_path: Path) -> None:
    result = _replay(tmp_path)
    assert _admitted(result)[:5] == RECORDED
    by_name = {w["name"].split("/")[1]: w for w in result["workloads"]}
    # created relative to the first creation; run times from Admitted (or PodsReady) to Finished
    assert by_name["job-w4-1a9e3"]["createdAt"] == 720 and by_name["job-w4-1a9e3"]["admittedAt"] == 4200
    assert by_name["job-w3-77be1"]["finishedAt"] - by_name["job-w3-77be1"]["admittedAt"] == 28 * 60  # from PodsReady
    # w6 was still pending at export: admitted when w4 finishes, with the median recorded run time
    assert by_name["job-w6-0b7f4"]["admittedAt"] == 5400
    assert any("job-w6-0b7f4" in w and "never admitted" in w for w in result["warnings"])


def test_the_same_history_under_strict_fifo_is_a_different_order(tmp_path: Path) -> None:
    """The check above can fail: with StrictFIFO, w4 blocks w3 and w5 (Kueue's StrictFIFO keeps the head)."""
    assert _admitted(_replay(tmp_path, "StrictFIFO"))[:5] != RECORDED


def test_fit_turns_a_history_into_a_load_model() -> None:
    records = read_history([FIXTURES / "history-besteffort.yaml"])
    assert len(records) == 6
    model = fit(records)
    assert model and all("poisson" in e["arrivals"] for e in model)
    counts = sorted(float(e["arrivals"]["poisson"].split("/")[0]) for e in model)
    assert sum(counts) * (80 / 60) == __import__("pytest").approx(6, rel=0.01)  # 6 arrivals over 80 minutes
    yaml.safe_dump(model)  # plain data, ready to paste into a scenario
