"""The lock is in force: what scripts/setup installs is exactly uv.lock, and uv.lock matches pyproject.toml.

`./scripts/lock` regenerates uv.lock and the requirement files; these tests fail when somebody edits
pyproject.toml without running it, or hand-edits a requirement file, or when the running environment drifted.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
LOCK = tomllib.loads((REPO / "uv.lock").read_text(encoding="utf-8"))
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^ ;\\]+)(?: ; (.*?))? \\$", re.M)


def _locked_versions() -> dict[str, set[str]]:
    versions: dict[str, set[str]] = {}
    for package in LOCK["package"]:
        if "editable" not in package.get("source", {}):
            versions.setdefault(canonicalize_name(package["name"]), set()).add(package["version"])
    return versions


def _pins(purpose: str) -> list[tuple[str, str, str | None]]:
    text = (REPO / "requirements" / f"{purpose}.txt").read_text(encoding="utf-8")
    return [(canonicalize_name(n), v, m) for n, v, m in PIN.findall(text)]


def _project() -> dict:
    [project] = [p for p in LOCK["package"] if "editable" in p.get("source", {})]
    return project


def test_lock_matches_pyproject() -> None:
    """uv.lock was resolved from the pyproject.toml that is committed (else: run ./scripts/lock)."""
    meta = _project()["metadata"]
    locked = sorted((canonicalize_name(r["name"]), r.get("specifier", ""), r.get("marker", ""))
                    for r in meta["requires-dist"])
    declared = []
    for extra, reqs in [(None, PYPROJECT["project"]["dependencies"]),
                        *PYPROJECT["project"]["optional-dependencies"].items()]:
        for text in reqs:
            req = Requirement(text)
            declared.append((canonicalize_name(req.name), str(req.specifier),
                             f"extra == '{extra}'" if extra else ""))
    norm = lambda rows: sorted((n, str(SpecifierSet(s)), m) for n, s, m in rows)  # noqa: E731
    assert norm(locked) == norm(declared), "pyproject.toml changed without ./scripts/lock"
    assert SpecifierSet(LOCK["requires-python"]) == SpecifierSet(PYPROJECT["project"]["requires-python"])


@pytest.mark.parametrize("purpose", ["demo", "test"])
def test_requirement_files_are_the_lock(purpose: str) -> None:
    """Each exported pin is hash-pinned and is the version uv.lock resolved."""
    text = (REPO / "requirements" / f"{purpose}.txt").read_text(encoding="utf-8")
    pins = _pins(purpose)
    assert pins, f"requirements/{purpose}.txt has no pins"
    assert len(pins) == len(re.findall(r"^[A-Za-z0-9]", text, re.M)), "a requirement is not pinned with =="
    locked = _locked_versions()
    for name, version, _ in pins:
        assert version in locked.get(name, set()), f"{name}=={version} is not in uv.lock"
    for block in re.split(r"\n(?=[A-Za-z0-9])", text.strip()):
        assert "--hash=sha256:" in block, f"no hash in: {block.splitlines()[0]}"


def test_the_lock_covers_every_supported_python_on_linux_and_macos() -> None:
    """Every package with platform wheels has one for CPython 3.11-3.13 on Linux x86_64 and macOS arm64."""
    assert PYPROJECT["project"]["requires-python"] == ">=3.11,<3.14"
    for package in LOCK["package"]:
        wheels = [w["url"].rsplit("/", 1)[1] for w in package.get("wheels", [])]
        if not wheels or "sdist" in package or any(w.endswith("-none-any.whl") for w in wheels):
            continue
        for py in ("cp311", "cp312", "cp313"):
            for platform in ("manylinux", "macosx"):
                hits = [w for w in wheels if platform in w and (f"-{py}-" in w or "-abi3-" in w)]
                assert hits, f"{package['name']} {package['version']} has no {py} wheel for {platform}"


def test_the_running_environment_is_the_lock() -> None:
    """What scripts/setup installed is exactly the pins (so a green suite means: green with the lock)."""
    env = {"python_version": f"{sys.version_info[0]}.{sys.version_info[1]}"}
    wrong = []
    for name, version, marker in _pins("test"):
        if marker and not Marker(marker).evaluate(env):
            continue
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            wrong.append(f"{name}: not installed (locked {version})")
            continue
        if canonicalize_name(installed) != canonicalize_name(version) and installed != version:
            wrong.append(f"{name}: {installed} installed, {version} locked")
    assert not wrong, "run ./scripts/setup (the environment is not the lock):\n" + "\n".join(wrong)
