"""`kueueplan schemas pull`: tags, pinned hashes, size cap, atomic writes. The downloader is replaced: no
test touches the network."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.errors import KueueplanError
from kueueplan.validate import pull, schemapack, validate


def _crd_bytes(project: str, release: str) -> dict[str, bytes]:
    """Stand-ins for the release files, keyed by the pack's file names (each a real CRD of that release)."""
    docs = schemapack.crd_documents(project, release)
    names = sorted(schemapack.pinned_files(project, release))
    plural = {doc["spec"]["names"]["plural"]: json.dumps(doc).encode() for doc in docs.values()}
    return {name: plural[name.split("_", 1)[1].removesuffix(".yaml")] for name in names}


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """URL -> body the fake downloader serves; every call is recorded in `served['calls']`."""
    bodies: dict[str, bytes] = {}
    calls: list[str] = []

    def fake_fetch(url: str, limit: int) -> bytes:
        calls.append(url)
        if url not in bodies:
            raise KueueplanError(f"download failed: {url}: HTTP Error 404")
        return bodies[url][: limit + 1]

    monkeypatch.setattr(pull, "fetch", fake_fetch)
    bodies["calls"] = calls  # type: ignore[assignment]
    return bodies


def _serve_pinned(served: dict, project: str, release: str, blobs: dict[str, bytes]) -> None:
    for name, data in blobs.items():
        served[pull.URLS[project].format(tag=release, name=name)] = data


def _pin(monkeypatch: pytest.MonkeyPatch, project: str, release: str, blobs: dict[str, bytes]) -> None:
    """Pin our stand-in files' hashes as if the pack had been derived from them."""
    real = schemapack.pinned_files
    pins = {name: hashlib.sha256(data).hexdigest() for name, data in blobs.items()}
    monkeypatch.setattr(schemapack, "pinned_files",
                        lambda p, r: pins if (p, r) == (project, release) else real(p, r))


def test_bad_tags_are_refused_before_any_download(served: dict, tmp_path: Path) -> None:
    for tag in ("main", "v0.19", "v0.19.2/../../x", "0.19.2", "v0.19.2-rc.1", "v0.19.2\n"):
        with pytest.raises(KueueplanError, match="not a release tag"):
            pull.pull(tag, None, tmp_path)
    with pytest.raises(KueueplanError, match="not a release tag"):
        pull.pull("v0.19.2", "../v1.7.0", tmp_path)  # the good tag is not fetched either
    assert served["calls"] == [] and list(tmp_path.iterdir()) == []


def test_pinned_release_is_fetched_verified_and_used(served: dict, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = _crd_bytes("kueue", "v0.19.2")
    _pin(monkeypatch, "kueue", "v0.19.2", blobs)
    _serve_pinned(served, "kueue", "v0.19.2", blobs)
    written = pull.pull("v0.19.2", None, tmp_path)
    assert sorted(p.name for p in written) == sorted(blobs)
    assert all((tmp_path / "kueue" / "v0.19.2" / name).read_bytes() == data for name, data in blobs.items())
    assert not [p for p in (tmp_path / "kueue").iterdir() if p.name.startswith(".")]


def test_the_pack_pins_every_file_it_was_derived_from() -> None:
    for project in schemapack.PROJECTS:
        for release in schemapack.releases(project):
            pins = schemapack.pinned_files(project, release)
            assert pins and all(len(h) == 64 for h in pins.values())
            assert all(name.startswith(schemapack.PROJECTS[project] + "_") for name in pins)


def test_hash_mismatch_writes_nothing(served: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = _crd_bytes("kueue", "v0.19.2")
    _pin(monkeypatch, "kueue", "v0.19.2", blobs)
    tampered = dict(blobs)
    last = sorted(tampered)[-1]
    tampered[last] = tampered[last].replace(b'"type"', b'"type" ', 1)
    _serve_pinned(served, "kueue", "v0.19.2", tampered)
    with pytest.raises(KueueplanError, match="does not match"):
        pull.pull("v0.19.2", None, tmp_path)
    assert not (tmp_path / "kueue").exists() or list((tmp_path / "kueue").iterdir()) == []


def test_real_pins_refuse_altered_files(served: dict, tmp_path: Path) -> None:
    # The pack's own pins (the release files' SHA-256) do not match our re-serialised stand-ins.
    _serve_pinned(served, "kuberay", "v1.7.0", _crd_bytes("kuberay", "v1.7.0"))
    with pytest.raises(KueueplanError, match="does not match"):
        pull.pull(None, "v1.7.0", tmp_path)
    assert not (tmp_path / "kuberay" / "v1.7.0").exists()


def test_oversize_download_is_refused(served: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = _crd_bytes("kueue", "v0.19.2")
    _pin(monkeypatch, "kueue", "v0.19.2", blobs)
    _serve_pinned(served, "kueue", "v0.19.2", blobs)
    monkeypatch.setattr(pull, "MAX_BYTES", 1000)
    with pytest.raises(KueueplanError, match="1,000-byte limit"):
        pull.pull("v0.19.2", None, tmp_path)
    assert not (tmp_path / "kueue" / "v0.19.2").exists()


def test_failed_write_leaves_nothing_and_keeps_the_old_release(served: dict, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = _crd_bytes("kueue", "v0.19.2")
    _pin(monkeypatch, "kueue", "v0.19.2", blobs)
    _serve_pinned(served, "kueue", "v0.19.2", blobs)
    old = tmp_path / "kueue" / "v0.19.2"
    old.mkdir(parents=True)
    (old / "previous.yaml").write_text("kept")
    real_replace = os.replace

    def failing_replace(src, dst) -> None:
        if Path(dst) == old and Path(src).name.startswith(".v0.19.2.part-"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(pull.os, "replace", failing_replace)
    with pytest.raises(KueueplanError, match="No space left"):
        pull.pull("v0.19.2", None, tmp_path)
    assert sorted(p.name for p in (tmp_path / "kueue").iterdir()) == ["v0.19.2"]
    assert [p.name for p in old.iterdir()] == ["previous.yaml"]


def test_a_download_error_midway_writes_nothing(served: dict, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = _crd_bytes("kueue", "v0.19.2")
    _pin(monkeypatch, "kueue", "v0.19.2", blobs)
    _serve_pinned(served, "kueue", "v0.19.2", {k: v for k, v in list(blobs.items())[:3]})
    with pytest.raises(KueueplanError, match="404"):
        pull.pull("v0.19.2", None, tmp_path)
    assert not (tmp_path / "kueue").exists() or list((tmp_path / "kueue").iterdir()) == []


def test_unpinned_release_needs_the_users_hashes(served: dict, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUEUEPLAN_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(KueueplanError, match="no pinned SHA-256 for kueue v0.20.0") as err:
        pull.pull("v0.20.0", None)
    assert "--sha256" in (err.value.hint or "") and served["calls"] == []
    # The user vouches for one file: exactly that file is fetched, checked, and validate then uses it.
    doc = json.loads(json.dumps(schemapack.crd_documents("kueue", "v0.19.2")["ClusterQueue.kueue.x-k8s.io"]))
    doc["spec"]["versions"][-1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["newField"] = {
        "type": "string"}
    data = json.dumps(doc).encode()
    name = "kueue.x-k8s.io_clusterqueues.yaml"
    served[pull.URLS["kueue"].format(tag="v0.20.0", name=name)] = data
    hashes = pull.parse_hashes([f"{name}={hashlib.sha256(data).hexdigest()}"])
    assert [p.name for p in pull.pull("v0.20.0", None, hashes=hashes)] == [name]
    cq = tmp_path / "cq.yaml"
    cq.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: cq\n"
                  "spec:\n  namespaceSelector: {}\n  newField: x\n")
    assert "KP202" not in {f.rule for f in validate([str(cq)], policies=[], kueue_version="v0.20.0").findings}
    assert "KP202" in {f.rule for f in validate([str(cq)], policies=[], kueue_version="v0.19.2").findings}
    for bad in ("../x.yaml=" + "0" * 64, "x.yaml\n=" + "0" * 64, "x.yaml=" + "0" * 63, "x.yaml"):
        with pytest.raises(KueueplanError, match="not FILE=SHA256"):
            pull.parse_hashes([bad])


def test_cli_bad_tag_exits_2(served: dict, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["schemas", "pull", "--kueue", "latest", "--kuberay", "", "--dest",
                                       str(tmp_path)])
    assert result.exit_code == 2 and "not a release tag" in result.output and served["calls"] == []
