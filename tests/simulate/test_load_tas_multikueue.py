"""A TAS flavor or a MultiKueue check in the simulated objects is named in `warnings` with what is not modelled:
the simulator admits on quota alone and runs MultiKueue workloads locally, never silently as if plain."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from kueueplan.cli import main

PLATFORMS = Path(__file__).resolve().parents[1] / "validate" / "platforms"


def _simulate(folder: Path) -> dict:
    res = CliRunner().invoke(main, ["simulate", str(folder), "-o", "json"])
    assert res.exit_code in (0, 1), res.output
    return json.loads(res.stdout)


def test_tas_flavor_is_warned_and_results_unchanged(tmp_path: Path) -> None:
    out = _simulate(PLATFORMS / "tas")
    assert ("ResourceFlavor h100-tas: topologyName (topology-aware scheduling) is not modelled: workloads are "
            "admitted on quota alone, without a topology placement") in out["warnings"]
    assert "Topology gpu-topology: not modelled by the simulator: ignored" in out["warnings"]
    assert not any("cpu-pool" in w for w in out["warnings"])  # a plain flavor is fully modelled
    # The warning changes no result: the same platform without topologyName simulates the same.
    plain = Path(shutil.copytree(PLATFORMS / "tas", tmp_path / "plain"))
    flavors = plain / "flavors.yaml"
    flavors.write_text(flavors.read_text().replace("  topologyName: gpu-topology\n", ""))
    (plain / "topology.yaml").unlink()
    assert _simulate(plain)["workloads"] == out["workloads"]


def test_multikueue_check_is_warned(tmp_path: Path) -> None:
    folder = Path(shutil.copytree(PLATFORMS / "multikueue", tmp_path / "mk"))
    (folder / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: sample\n  namespace: default\n  labels:\n"
        "    kueue.x-k8s.io/queue-name: user-queue\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n"
        "      containers:\n      - name: main\n        image: busybox\n        resources:\n          requests:\n"
        "            cpu: \"1\"\n")
    out = _simulate(folder)
    assert any(w.startswith("AdmissionCheck sample-multikueue: MultiKueue dispatch to worker clusters is not "
                            "modelled") for w in out["warnings"])
    assert [w["name"] for w in out["workloads"]] == ["default/sample"]
