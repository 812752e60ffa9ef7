"""The compiled twin of headplan.py (setup.py, simulate/native.py) gives the runs the pure module gives, byte for
byte, and is used only when it was built from the module's current source."""

from __future__ import annotations

import ast
import copy
import hashlib
import importlib
import importlib.machinery
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from kueueplan.simulate import engine, headplan, native
from kueueplan.simulate.engine import simulate
from kueueplan.simulate.result import result_json
from kueueplan.simulate.scenario import scenario_from_dict
from tests.simulate.test_fast_paths import CLASSES, _perf_shape
from tests.simulate.test_properties import busy_cohorts, scenarios
from tests.simulate.test_session7_attack import busy_plain_cohort


def _twin() -> Any:
    """The twin, built from the current headplan.py and .pxd: a stale one (an edit without ./scripts/setup) would
    compare the old code with the new and report their differences as the twin's."""
    try:
        twin = importlib.import_module("kueueplan.simulate._native_headplan")
    except ImportError:
        twin = None
    if twin is None or twin.SOURCE_SHA256 != native.source_digest(Path(headplan.__file__)):
        state = "not built" if twin is None else "stale (built from another headplan.py or .pxd)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the compiled twin of headplan.py is {state}: scripts/setup builds it "
                        "(Cython from the lock and a C compiler; its log tells why it could not)")
        pytest.skip(f"the compiled twin of headplan.py is {state} (./scripts/setup builds it with a C compiler)")
    return twin


def _both(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    runs = []
    for module in (_twin(), headplan):
        with monkeypatch.context() as mp:
            mp.setattr(engine, "HeadPlans", module.HeadPlans)
            runs.append(result_json(simulate(scenario_from_dict(copy.deepcopy(data)))))
    return runs[0], runs[1]


def test_the_engine_runs_the_twin_built_from_this_source() -> None:
    twin = _twin()
    assert twin.SOURCE_SHA256 == native.source_digest(Path(headplan.__file__))
    assert engine.HeadPlans is twin.HeadPlans or os.environ.get("KUEUEPLAN_PURE", "") not in ("", "0")
    assert any(twin.__file__.endswith(s) for s in importlib.machinery.EXTENSION_SUFFIXES)
    with pytest.raises(TypeError):  # an extension type: why the tests that wrap its methods run the pure module
        twin.HeadPlans.nominate = None


def _package(tmp_path: Path, source: str, built_from: str) -> Any:
    """A package `pkg` with module `mod` and a stand-in twin `_native_mod` built from `built_from`."""
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "mod.py").write_text(source)
    digest = hashlib.sha256(built_from.encode()).hexdigest()
    (folder / "_native_mod.py").write_text(f"{built_from}\nSOURCE_SHA256 = {digest!r}\n")
    return importlib.import_module("pkg.mod")


@pytest.mark.parametrize("built_from,pure,used", [
    ("X = 1\n", "", "twin"),  # built from the module's source
    ("X = 0\n", "", "pure"),  # built before an edit: stale, never run
    ("X = 1\n", "1", "pure"),  # KUEUEPLAN_PURE=1
    ("X = 1\n", "0", "twin"),  # KUEUEPLAN_PURE=0 does not turn the twin off
])
def test_a_twin_is_used_only_when_built_from_the_current_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  built_from: str, pure: str, used: str) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("KUEUEPLAN_PURE", pure)
    for name in ("pkg", "pkg.mod", "pkg._native_mod"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    mod = _package(tmp_path, "X = 1\n", built_from)
    got = native.twin(mod)
    assert got.__name__ == ("pkg._native_mod" if used == "twin" else "pkg.mod")


def test_a_twin_built_before_its_pxd_changed_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The .pxd types the twin: one edited after the build (say a `long` made `object`) left the old twin running."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("KUEUEPLAN_PURE", raising=False)
    for name in ("pkg", "pkg.mod", "pkg._native_mod"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    mod = _package(tmp_path, "X = 1\n", "X = 1\n")
    assert native.twin(mod).__name__ == "pkg._native_mod"  # built from mod.py, which had no .pxd
    (tmp_path / "pkg" / "mod.pxd").write_text("cdef long X\n")
    assert native.twin(mod) is mod


def test_a_module_without_a_twin_is_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "solo.py").write_text("X = 1\n")
    monkeypatch.delitem(sys.modules, "solo", raising=False)
    solo = importlib.import_module("solo")
    assert native.twin(solo) is solo


def test_the_sdist_carries_what_builds_the_twins(tmp_path: Path) -> None:
    """A wheel built from the sdist (`python -m build`, `pip install kueueplan-*.tar.gz`) gets a twin only for the
    modules whose .pxd the sdist holds (setup.py: a module with a .pxd gets a twin); without one it silently ran
    pure. SOURCES.txt is the file list `setup.py sdist` packs."""
    root = Path(__file__).parents[2]
    subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(tmp_path)], cwd=root,
                   check=True, capture_output=True)
    packed = set((tmp_path / "kueueplan.egg-info" / "SOURCES.txt").read_text().split())
    pxds = {p.relative_to(root).as_posix() for p in (root / "src/kueueplan/simulate").glob("*.pxd")}
    assert pxds and {"setup.py"} | pxds | {p.removesuffix(".pxd") + ".py" for p in pxds} <= packed


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.one_of(scenarios(), busy_cohorts()))
def test_random_clusters_same_run_compiled_and_pure(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    twin, pure = _both(data, monkeypatch)
    assert twin == pure


def test_seeded_busy_cohorts_same_run_compiled_and_pure(monkeypatch: pytest.MonkeyPatch) -> None:
    for seed in range(25):  # busy plain cohorts with events: the plans' every path (test_session7_attack.py)
        twin, pure = _both(busy_plain_cohort(random.Random(seed)), monkeypatch)
        assert twin == pure, seed


def _huge(node: Any) -> Any:
    """Memory in Ei and CPU in Pi (a quantity saturates at 2**63 - 1 milli-units or bytes: these stay below, their
    sums in a cohort do not) and priorities near int32's top, in place."""
    if isinstance(node, list):
        for item in node:
            _huge(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in ("nominalQuota", "borrowingLimit") or (key in ("cpu", "memory") and isinstance(value, str)):
                node[key] = value.removesuffix("Gi") + ("Ei" if value.endswith("Gi") else "Pi")
            elif key == "value" and isinstance(value, int):
                node[key] = 2_000_000_000 - value
            else:
                _huge(value)
    return node


def test_huge_quantities_and_priorities_same_run_compiled_and_pure(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sums past a C long (a cohort's quota and usage) go through the twin's plans as Python ints (the .pxd types
    counters only: the cohort's room typed `long` in nominate raised OverflowError in the twin alone)."""
    admitted = 0
    for seed in range(12):
        twin, pure = _both(_huge(busy_plain_cohort(random.Random(seed))), monkeypatch)
        assert twin == pure, seed
        admitted += sum(w["admittedAt"] is not None for w in twin["workloads"])
    assert admitted > 50


@pytest.mark.parametrize("until", [None, "700ms", "1300ms"])
def test_perf_shape_same_run_compiled_and_pure(until: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    twin, pure = _both(_perf_shape(8, until, CLASSES), monkeypatch)
    assert twin == pure and twin["workloads"]



_HASHABLE = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                         lambda inner: st.tuples(inner, inner) | st.tuples(inner, inner, inner), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(value=_HASHABLE)
def test_signature_terms_same_compiled_and_pure(value: Any) -> None:
    """The twin computes splitmix64 in C's unsigned 64 bits: it must wrap exactly as the pure module's masks do,
    for every hash (negative ones, -1's stand-in -2, ints past 64 bits)."""
    assert _twin().signature_term(value) == headplan.signature_term(value)


_BROKEN_HEAD = """
import importlib, sys
mod = importlib.import_module(sys.argv[1])
class Root:  # a cohort with nothing free
    subtree = usage = {"cpu": 0}
group = mod.FittingHeads(Root(), [], True)
group.heads = [None]  # a head that is not one: a broken invariant
try:
    group.look()
except AttributeError as e:
    print(e)
"""


def test_a_broken_invariant_raises_in_the_twin_as_in_the_pure_module() -> None:
    """A typed local holding None (here FittingHeads._least_fit's `h`) made the twin read through a null struct:
    a segmentation fault (exit -11) that took the process, or a pool's worker, down without a word, where the pure
    module raises AttributeError. setup.py compiles with nonecheck."""
    _twin()
    said = []
    for module in ("kueueplan.simulate._native_headplan", "kueueplan.simulate.headplan"):
        done = subprocess.run([sys.executable, "-c", _BROKEN_HEAD, module], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, (module, done.returncode, done.stderr[-500:])
        said.append(done.stdout)
    assert said[0] == said[1] == "'NoneType' object has no attribute 'fr'\n"


def _assigned(tree: ast.Module) -> dict[str, set[str]]:
    """Per class of a module, the attributes its methods assign to `self`."""
    out: dict[str, set[str]] = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        out[cls.name] = {e.attr for n in ast.walk(cls) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                         for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) for e in ast.walk(t)
                         if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self"}
    return out


def _declared(pxd: str) -> dict[str, set[str]]:
    """Per `cdef class` of a .pxd, its `cdef public TYPE a, b` attributes (TYPE one word, or long long)."""
    out: dict[str, set[str]] = {}
    for line in pxd.splitlines():
        if m := re.match(r"cdef class (\w+)", line):
            cls = out[m.group(1)] = set()
        elif m := re.match(r"\s+cdef public (?:long long|\w+) (.+)", line):
            cls |= {name.strip() for name in m.group(1).split(",")}
    return out


def test_the_pxd_declares_every_attribute_the_module_assigns() -> None:
    """An extension type has only the attributes its .pxd declares: one the .py assigns without a declaration would
    fail in the twin alone (AttributeError), and only on the path that assigns it."""
    source = Path(headplan.__file__)
    assigned = _assigned(ast.parse(source.read_text()))
    declared = _declared(source.with_suffix(".pxd").read_text())
    assert set(declared) <= set(assigned)
    for cls, names in declared.items():
        assert assigned[cls] == names, (cls, assigned[cls] ^ names)


@pytest.mark.parametrize("broken,env,said", [
    (True, {}, "Cython could not compile the twins"),
    (False, {"KUEUEPLAN_COMPILE": "0"}, "KUEUEPLAN_COMPILE=0"),  # the GitHub Action's default (action.yml `compile`)
])
def test_a_build_without_twins_goes_on(tmp_path: Path, broken: bool, env: dict[str, str], said: str) -> None:
    """A .py (or .pxd) Cython rejects stopped `pip install -e .` as a whole, so scripts/setup and scripts/test ended
    on pip's traceback; the build goes on without the twin now, as it does without a C compiler or when asked to."""
    pytest.importorskip("Cython")
    root = Path(__file__).parents[2]
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(root / name, tmp_path / name)
    folder = tmp_path / "src/kueueplan/simulate"
    folder.mkdir(parents=True)
    for name in ("native.py", "headplan.pxd"):
        shutil.copy(root / "src/kueueplan/simulate" / name, folder / name)
    (folder / "headplan.py").write_text(Path(headplan.__file__).read_text() + ("def broken(:\n" if broken else ""))
    done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr[-3000:]
    assert said in done.stderr
    assert not list(folder.glob("_native_*"))


_FAKE_PYTHON = """#!/bin/sh
# The interpreter scripts/setup runs: `-m venv DIR` makes DIR/bin/python, this script again; `-m pip` stands for pip
# (logged; `install -e .` builds a stand-in twin, a .py with setup.py's SOURCE_SHA256, where the file build-ok is).
if [ "$1" = -m ] && [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0; fi
if [ "$1" = -m ] && [ "$2" = pip ]; then
  echo "$*" >> pip-calls
  case "$*" in *" -e ."*) [ -f build-ok ] && exec {real} - <<'PY'
import pathlib, sys
sys.path.insert(0, "src")
from kueueplan.simulate.native import source_digest
py = pathlib.Path("src/kueueplan/simulate/headplan.py")
pathlib.Path("src/kueueplan/simulate/_native_headplan.py").write_bytes(
    py.read_bytes() + f"\\nSOURCE_SHA256 = {{source_digest(py)!r}}\\n".encode())
PY
  esac
  exit 0
fi
PYTHONPATH="$PWD/src" exec {real} "$@"
"""


def _setup(repo: Path) -> tuple[int, str]:
    """Runs scripts/setup demo in `repo`: the installs of kueueplan it made (pip -e .) and its stderr."""
    done = subprocess.run(["scripts/setup", "demo"], cwd=repo, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHON": str(repo / "fake-python"), "TMPDIR": str(repo)})
    assert done.returncode == 0, done.stderr
    calls = repo / "pip-calls"
    installs = calls.read_text().count(" -e .") if calls.exists() else 0
    calls.unlink(missing_ok=True)
    return installs, done.stderr


def test_setup_rebuilds_a_twin_that_is_missing_or_stale_and_says_when_it_cannot(tmp_path: Path) -> None:
    """scripts/setup's stamp said "built" while the twin was deleted (git clean) or a failed rebuild left the old one:
    it exited at once and kueueplan ran pure with no word. Now it rebuilds unless the twin is current, says when the
    build fails, and does not retry a build that failed until a source changes."""
    root = Path(__file__).parents[2]
    repo = tmp_path / "repo"
    for name in ("scripts", "src", "requirements"):
        shutil.copytree(root / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "_native_*"))
    for name in ("setup.py", "pyproject.toml"):
        shutil.copy(root / name, repo / name)
    fake = repo / "fake-python"
    fake.write_text(_FAKE_PYTHON.format(real=sys.executable))
    fake.chmod(0o755)
    twin = repo / "src/kueueplan/simulate/_native_headplan.py"
    (repo / "build-ok").touch()
    assert _setup(repo)[0] == 1 and twin.exists()  # a new .venv, with the twin
    assert _setup(repo) == (0, "")  # nothing to do
    twin.unlink()
    assert _setup(repo)[0] == 1 and twin.exists()  # deleted: rebuilt
    (repo / "build-ok").unlink()
    with (repo / "src/kueueplan/simulate/headplan.py").open("a") as f:
        f.write("# edited\n")
    installs, err = _setup(repo)
    assert installs == 1 and "was not built" in err  # the old twin is stale and the build failed: said
    assert _setup(repo) == (0, "")  # a failed build is not retried on every run
    (repo / "build-ok").touch()
    (repo / ".venv/.kueueplan-twins").unlink()  # what the note says to do with a compiler installed
    assert _setup(repo)[0] == 1
    assert _setup(repo) == (0, "")
