"""Import of JobSet and PyTorchJob workloads: `import` then `build` reproduces them field for field, with the
pod sets Kueue derives (kube.podsets); a PyTorchJob replica type other than Master/Worker is a clear error."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.compile import compile_platform
from kueueplan.kube.podsets import pod_sets_for
from kueueplan.workflow.importer import IMPORTED_KINDS, import_manifests, write_spec
from kueueplan.workflow.manifests import changed_paths, index, load_documents

PLATFORM = Path(__file__).parent / "platforms" / "gpu-training"


def test_import_then_build_reproduces_jobset_and_pytorchjob(tmp_path: Path) -> None:
    docs = load_documents([PLATFORM])
    result = import_manifests(docs)
    assert result.skipped == []
    write_spec(result, tmp_path / "spec")
    [(_, built)] = compile_platform(tmp_path / "spec").items()
    original = {k: v for k, v in index(docs).items() if k[0] in IMPORTED_KINDS}
    rebuilt = index(built)
    assert sorted(original) == sorted(rebuilt)
    assert {k: changed_paths(original[k], rebuilt[k]) for k in original if original[k] != rebuilt[k]} == {}
    kinds = {k[0] for k in rebuilt}
    assert {"JobSet", "PyTorchJob"} <= kinds
    jobset = next(v for k, v in rebuilt.items() if k[0] == "JobSet")
    assert {ps.name: ps.count for ps in pod_sets_for(jobset)} == {"workers": 4}


def test_unknown_pytorch_replica_type_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for f in PLATFORM.glob("*.yaml"):
        (folder / f.name).write_text(f.read_text().replace("    Worker:\n", "    Chief:\n"))
    out = CliRunner().invoke(main, ["import", str(folder), "-o", str(tmp_path / "spec")])
    assert out.exit_code == 2
    assert "replica type 'Chief' is not Master or Worker" in out.output and "pytorchjob.yaml" in out.output
