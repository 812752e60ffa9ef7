"""The compiled twin of a pure simulator module, where setup.py built one (Cython, typed by the module's .pxd).

A twin runs the same source with typed attributes and locals; tests/simulate/test_native.py checks that both give
the same bytes. It is used only when it was built from the module's current source and .pxd (source_digest), so
an edit of either without a rebuild (`./scripts/setup` rebuilds) runs the pure module rather than stale code.
KUEUEPLAN_PURE=1 runs the pure modules always (to rule the compiled core out when reporting a problem).
"""

from __future__ import annotations

import hashlib
import importlib
import os
from pathlib import Path
from types import ModuleType


def source_digest(path: Path) -> str:
    """The SHA-256 of what a twin is built from: the module's source and its .pxd (setup.py records it in the twin
    as SOURCE_SHA256)."""
    pxd = path.with_suffix(".pxd")
    return hashlib.sha256(path.read_bytes() + (pxd.read_bytes() if pxd.exists() else b"")).hexdigest()


def twin(module: ModuleType) -> ModuleType:
    """`module`'s compiled twin when it is built from this source and not turned off; else `module` itself."""
    if os.environ.get("KUEUEPLAN_PURE", "") not in ("", "0"):  # KUEUEPLAN_PURE=0 does not turn it off
        return module
    package, _, name = module.__name__.rpartition(".")
    try:
        compiled = importlib.import_module(f"{package}._native_{name}" if package else f"_native_{name}")
    except Exception:  # not built, or another Python's; a stale twin may fail otherwise at import (never run then)
        return module
    current = getattr(compiled, "SOURCE_SHA256", None) == source_digest(Path(module.__file__ or ""))
    return compiled if current else module


__all__ = ["source_digest", "twin"]
