"""Writing an imported spec: a record of what import wrote, and `--force` that replaces only that, atomically.

`kueueplan import` records the files it writes in `.kueueplan-import.yaml` (hidden, so spec readers skip it) and
marks each with a first line (importer.IMPORT_MARKER; a file rewritten by hand loses it). `--force` replaces
exactly import's own files: the new spec is written to a sibling folder, everything else in the target
(README, CI files, any non-YAML) is carried over, and the two folders are swapped by rename, so no reader ever
sees half an old spec beside a new one. A YAML file that no earlier import recorded (hand-written spec, another
tool's output) is in the way: exit 2 naming it, nothing written. Links are never followed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import yaml

from kueueplan.errors import KueueplanError

RECORD = ".kueueplan-import.yaml"
_YAML = (".yaml", ".yml")


def recorded(out_dir: Path) -> set[str]:
    """Relative paths an earlier import wrote into out_dir (empty when it has no valid record)."""
    path = out_dir / RECORD
    if not path.is_file() or path.is_symlink():
        return set()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, OSError):
        raise KueueplanError("the import record is not readable YAML", file=str(path),
                             hint="delete it and move the old spec away, or choose another folder") from None
    files = data.get("files") if isinstance(data, dict) else None
    return {f for f in files if isinstance(f, str)} if isinstance(files, list) else set()


def _entries(out_dir: Path) -> list[Path]:
    """Everything below out_dir, links included but never followed."""
    out = []
    for root, dirs, files in os.walk(out_dir, followlinks=False):
        out += [Path(root) / name for name in sorted(files)]
        out += [Path(root) / d for d in sorted(dirs) if (Path(root) / d).is_symlink()]
    return sorted(out)


def _own(path: Path, rel: str, own: set[str], is_own: Callable[[Path], bool] | None) -> bool:
    """Import's own file: its marker line when the writer has one (a file rewritten by hand lost it), else the
    record."""
    if path.is_symlink():
        return False
    return is_own(path) if is_own is not None else rel in own


def _in_the_way(out_dir: Path, own: set[str], is_own: Callable[[Path], bool] | None) -> list[Path]:
    way = []
    for path in _entries(out_dir):
        rel = path.relative_to(out_dir).as_posix()
        if rel == RECORD:
            continue
        if path.suffix in _YAML and (path.is_symlink() or not _own(path, rel, own, is_own)):
            way.append(path)
    return way


def write_files(files: dict[str, str], out_dir: Path, force: bool,
                is_own: Callable[[Path], bool] | None = None) -> list[Path]:
    """Write {relative path: text} into out_dir (see the module docstring); `is_own(path)` also accepts a file
    as import's own (its marker line). Returns the paths written."""
    if out_dir.is_symlink():
        raise KueueplanError(f"{out_dir} is a link", hint="write the spec to a real folder")
    exists = out_dir.exists()
    if exists and not out_dir.is_dir():
        raise KueueplanError(f"{out_dir} is not a folder", file=str(out_dir))
    own = recorded(out_dir) if exists else set()
    if exists and not force and any(p.suffix in _YAML for p in _entries(out_dir)):
        raise KueueplanError(f"{out_dir} already holds YAML files", hint="choose an empty folder or pass --force")
    if exists:
        way = _in_the_way(out_dir, own, is_own)
        if way:
            what = "is a symlink" if way[0].is_symlink() else "was not written by `kueueplan import`"
            raise KueueplanError(f"this file {what}; refusing to overwrite it, nothing was written"
                                 + (f" ({len(way) - 1} more in the way)" if len(way) > 1 else ""),
                                 file=str(way[0]), hint=f"move it out of {out_dir}, or import into another folder "
                                 f"(--force replaces only the files listed in {RECORD})")
    tmp = out_dir.parent / f".{out_dir.name}.import-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir(parents=True)
        paths = []
        for rel, text in sorted(files.items()):
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            paths.append(out_dir / rel)
        (tmp / RECORD).write_text(yaml.safe_dump({"files": sorted(files)}, sort_keys=False), encoding="utf-8")
        if exists:
            _carry_over(out_dir, tmp, own, is_own)
            backup = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
            os.rename(out_dir, backup)
            os.rename(tmp, out_dir)
            shutil.rmtree(backup, ignore_errors=True)
        else:
            out_dir.parent.mkdir(parents=True, exist_ok=True)
            os.rename(tmp, out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return paths


def _carry_over(out_dir: Path, tmp: Path, own: set[str], is_own: Callable[[Path], bool] | None) -> None:
    """What the old folder holds besides import's own files (README, .git, ...) moves into the new one."""
    for path in _entries(out_dir):
        rel = path.relative_to(out_dir)
        if rel.as_posix() == RECORD or (tmp / rel).exists() or (
                path.suffix in _YAML and _own(path, rel.as_posix(), own, is_own)):
            continue
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            os.symlink(os.readlink(path), tmp / rel)
        else:
            shutil.copy2(path, tmp / rel, follow_symlinks=False)
