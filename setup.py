"""The compiled twins of the simulator's hot modules (pyproject.toml holds everything else).

A twin is the module's own source compiled by Cython under the name `_native_<module>`, typed by the
module's .pxd (an augmenting declaration file: the .py stays the one source of the code). The twin carries
the SHA-256 of the source and .pxd it was built from (native.source_digest), and kueueplan.simulate.native uses
it only while they are the module's current ones: an edit without a rebuild runs the pure module, never stale
code. Without Cython or a C compiler, or with KUEUEPLAN_COMPILE=0, the build goes on without twins
(Extension(optional=True)) and kueueplan runs pure Python, slower.
"""

from __future__ import annotations

import os
import runpy
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SIMULATE = Path("src/kueueplan/simulate")
TWINS = sorted(p.stem for p in SIMULATE.glob("*.pxd"))  # a module with a .pxd gets a twin
NATIVE = runpy.run_path(str(SIMULATE / "native.py"))  # source_digest, which the twin is checked against at run time


class BuildTwins(build_ext):
    """Write each twin's source (the module, its hash appended) into the build folder and cythonize it there."""

    def run(self) -> None:
        if os.environ.get("KUEUEPLAN_COMPILE") == "0":  # e.g. the GitHub Action: 15 s per run for a speed few need
            return self._without_twins("KUEUEPLAN_COMPILE=0")
        try:
            from Cython.Build import cythonize
            from Cython.Compiler.Errors import CompileError
        except ImportError:
            return self._without_twins("Cython is not installed")
        folder = Path(self.build_temp) / "twins" / "kueueplan" / "simulate"
        folder.mkdir(parents=True, exist_ok=True)
        for parent in (folder.parent, folder):
            (parent / "__init__.py").touch()  # Cython names the module by its packages
        for ext in self.extensions:
            name = ext.name.rpartition("._native_")[2]
            module = SIMULATE / f"{name}.py"
            digest = NATIVE["source_digest"](module)
            twin = module.read_bytes() + f"\nSOURCE_SHA256 = {digest!r}\n".encode()
            (folder / f"_native_{name}.py").write_bytes(twin)
            (folder / f"_native_{name}.pxd").write_bytes((SIMULATE / f"{name}.pxd").read_bytes())
            ext.sources = [str(folder / f"_native_{name}.py")]
        # nonecheck: None in a typed local (a broken invariant) raises AttributeError as the pure module does, where
        # it read through a null struct and crashed the process (no measurable cost on large-jitter)
        try:
            built = cythonize(self.extensions, language_level=3, quiet=True,
                              compiler_directives={"annotation_typing": False, "nonecheck": True})
        except CompileError:  # Cython printed why; like a failed C compile (optional=True): no twin, still an install
            return self._without_twins("Cython could not compile the twins")
        for ext, c in zip(self.extensions, built):  # setuptools' own Extension objects, with the C sources
            ext.sources = c.sources
        super().run()

    def _without_twins(self, why: str) -> None:
        self.warn(f"{why}: kueueplan runs its pure-Python simulator core (slower)")
        self.extensions = []


setup(
    ext_modules=[Extension(f"kueueplan.simulate._native_{name}", sources=[], optional=True) for name in TWINS],
    cmdclass={"build_ext": BuildTwins},
)
