"""Writing a rendered tree into OUT_DIR safely.

- Every file carries the generated-file marker; only files with it are ever overwritten or pruned, and a
  generated path that collides with a hand-written file stops the build before anything is written.
- Atomic: each top-level folder (one per environment) is staged next to its target and swapped in with one
  rename (renameat2 RENAME_EXCHANGE where the kernel has it), so an interrupted build leaves the old folder or
  the new one. A folder that also holds hand-written files is updated file by file, each with an atomic replace.
- An flock on a lock file serialises concurrent builds into the same OUT_DIR (a killed build releases it).
- Never through a symlink: a symlinked OUT_DIR, environment folder or anything below is refused, so a
  repository cannot make a build write, delete or rmdir outside it.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from kueueplan.emit.yaml import has_marker
from kueueplan.errors import KueueplanError

LOCK_NAME = ".kueueplan.lock"
_STAGE = ".kueueplan-stage-"
_OLD = ".kueueplan-old-"
_TMP = ".kueueplan-tmp-"
_PART_RE = re.compile(r"^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$")


def check_relpath(relpath: str) -> None:
    """Refuse a path that is not made of plain lower-case names (so nothing can leave OUT_DIR)."""
    parts = relpath.split("/")
    if not parts or any(not _PART_RE.match(p) or ".." in p for p in parts) or len(relpath) > 255:
        raise KueueplanError(f"refusing to write {relpath!r}: not a plain relative path of valid names",
                             hint="environment and object names must be valid Kubernetes names")


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


LOCK_WAIT_SECONDS = 120.0  # a concurrent build of the same OUT_DIR takes about a second; wait for it


@contextmanager
def build_lock(out_dir: Path) -> Iterator[None]:
    """Hold an exclusive flock on OUT_DIR/.kueueplan.lock while writing; wait for a concurrent build.

    The kernel releases a flock when its holder exits, however it exits (SIGKILL included), so there is no
    stale lock to guess at: the file's content means nothing. The file is removed on release; a waiter that
    then holds a lock on the removed file notices (the path no longer names its file) and locks again.
    """
    lock = out_dir / LOCK_NAME
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fd = os.open(lock, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise KueueplanError(f"refusing to use the lock file {lock}: it is a symlink", file=str(lock),
                                     hint="delete it; kueueplan creates it while it builds") from None
            raise
        if _try_lock(fd, deadline):
            if _same_file(fd, lock):
                break
            os.close(fd)  # the previous holder removed it meanwhile: lock the new one
            continue
        os.close(fd)
        raise KueueplanError(f"another kueueplan build is writing {out_dir}; gave up after "
                             f"{LOCK_WAIT_SECONDS:.0f} s", file=str(lock), hint="wait for it to finish")
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # for people looking; the flock is what counts
        yield
    finally:
        try:
            lock.unlink(missing_ok=True)
        finally:
            os.close(fd)  # closing releases the flock


def _try_lock(fd: int, deadline: float) -> bool:
    delay = 0.01
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{_TMP}{path.name}")
    if os.path.lexists(tmp):
        os.unlink(tmp)  # ours by name; never written through (it could be a planted symlink)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with open(fd, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directories (Linux renameat2 RENAME_EXCHANGE, macOS renamex_np RENAME_SWAP);
    False when unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if sys.platform == "darwin":
            rename_swap = 0x2
            result = libc.renamex_np(os.fsencode(a), os.fsencode(b), rename_swap)
        else:
            at_fdcwd, rename_exchange = -100, 2
            result = libc.renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    except (OSError, AttributeError):
        return False
    if result == 0:
        return True
    if ctypes.get_errno() in (errno.EINVAL, errno.ENOSYS, errno.EPERM):
        return False
    raise OSError(ctypes.get_errno(), f"cannot swap {a} and {b}")


def _all_generated(folder: Path) -> bool:
    for path in folder.rglob("*"):
        if path.is_file() and not _is_generated(path):
            return False
    return True


def _is_generated(path: Path) -> bool:
    if path.is_symlink():
        return False  # kueueplan writes no symlinks
    try:
        with open(path, encoding="utf-8") as handle:
            return has_marker(handle.read(200))
    except (OSError, UnicodeDecodeError):
        return False


def _current(folder: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if folder.is_dir():
        for path in folder.rglob("*"):
            if path.is_symlink():
                out[path.relative_to(folder).as_posix()] = "\0"
            elif path.is_file():
                try:
                    out[path.relative_to(folder).as_posix()] = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    out[path.relative_to(folder).as_posix()] = "\0"
    return out


def recover(out_dir: Path) -> None:
    """Finish or undo what an interrupted build left behind."""
    for path in sorted(out_dir.iterdir()):
        name = path.name
        if name.startswith((_OLD, _STAGE)) and path.is_symlink():
            path.unlink()  # kueueplan's own names never hold a symlink: somebody planted it
        elif name.startswith(_OLD):
            target = out_dir / name[len(_OLD):]
            if not target.exists():
                os.rename(path, target)  # the swap was cut between its two renames: keep the old tree
            else:
                shutil.rmtree(path)
        elif name.startswith(_STAGE):
            shutil.rmtree(path)
    for tmp in out_dir.rglob(f"{_TMP}*"):
        if tmp.is_symlink() or tmp.is_file():
            tmp.unlink()


def write_tree(out_dir: str | Path, files: dict[str, str], prune_dirs: list[str] | None = None) -> list[str]:
    """Write `files` (relative path -> text, each starting with the marker) into `out_dir`.

    `prune_dirs`: top-level folders whose generated files not in `files` are removed (default: the folders
    written). Returns the relative paths that changed.
    """
    out = Path(out_dir)
    for relpath, text in files.items():
        check_relpath(relpath)
        if not has_marker(text):
            raise KueueplanError(f"internal: {relpath} lacks the generated-file marker")
    refuse_symlinked_out(out)
    if out.exists() and not out.is_dir():
        raise KueueplanError(f"{out} exists and is not a folder")
    try:
        return _write_tree(out, files, prune_dirs)
    except OSError as err:  # read-only or full disk, permissions: name the path, no traceback
        where = err.filename or out
        raise KueueplanError(f"cannot write {where}: {err.strerror or err}", file=str(where),
                             hint="check that the output folder is writable and the disk has space; "
                                  "the previous build is left as it was") from None


def _write_tree(out: Path, files: dict[str, str], prune_dirs: list[str] | None) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    by_top: dict[str, dict[str, str]] = {}
    for relpath in sorted(files):
        top, _, rest = relpath.partition("/")
        by_top.setdefault(top, {})[rest] = files[relpath]
    changed: list[str] = []
    with build_lock(out):
        recover(out)
        _refuse_collisions(out, files, list(prune_dirs or []))
        for top in sorted(by_top):
            changed += _write_top(out, top, by_top[top])
        for top in sorted(set(prune_dirs or []) - set(by_top)):
            changed += _prune(out / top, set(), top)
        _fsync_dir(out)
    return changed


def refuse_symlinked_out(out: Path, verb: str = "build") -> None:
    """OUT_DIR must not be, or lie below, a symlink within the working directory (`-o gen` with gen -> /etc)."""
    parts = out.parts if not out.is_absolute() else (out.name,) if out.name else ()
    base = Path() if not out.is_absolute() else out.parent
    current = base
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise KueueplanError(f"refusing to {verb} into {current}: it is a symlink", file=str(current),
                                 hint="kueueplan never writes through a symlink; make it a real folder")


def _refuse_symlinks_below(out: Path, relpath: str) -> None:
    current = out
    for part in relpath.split("/"):
        current = current / part
        if current.is_symlink():
            raise KueueplanError(f"refusing to write through the symlink {current}", file=str(current),
                                 hint="kueueplan never writes through a symlink; make it a real folder or "
                                      "file, or delete it")


def _refuse_collisions(out: Path, files: dict[str, str], prune_dirs: list[str]) -> None:
    for top in prune_dirs:
        _refuse_symlinks_below(out, top)
    for relpath in files:
        _refuse_symlinks_below(out, relpath)
        target = out / relpath
        if not _inside(out, target):
            raise KueueplanError(f"refusing to write {relpath!r}: it would leave {out}")
        if target.is_symlink():
            raise KueueplanError(f"refusing to write through the symlink {target}")
        if target.exists() and (target.is_dir() or not _is_generated(target)):
            raise KueueplanError(f"{target} exists and was not generated by kueueplan; refusing to overwrite it",
                                 file=str(target), hint="move the hand-written file elsewhere or delete it")
        for parent in target.relative_to(out).parents:
            p = out / parent
            if str(parent) != "." and p.exists() and not p.is_dir():
                raise KueueplanError(f"{p} is a file where kueueplan needs a folder", file=str(p))


def _write_top(out: Path, top: str, files: dict[str, str]) -> list[str]:
    """One top-level entry: a single file (no '/'), or a folder swapped in whole or updated file by file."""
    if "" in files:  # a file at the top of OUT_DIR
        target = out / top
        if target.is_file() and target.read_text(encoding="utf-8") == files[""]:
            return []
        _write_file(target, files[""])
        return [top]
    target = out / top
    before = _current(target)
    if target.is_dir() and before == files:
        return []
    if target.is_dir() and not _all_generated(target):
        return _update_in_place(target, top, files)
    stage = out / f"{_STAGE}{top}"
    if stage.exists():
        shutil.rmtree(stage)
    for rel, text in files.items():
        _write_file(stage / rel, text)
    _fsync_dir(stage)
    if not target.exists():
        os.rename(stage, target)
    elif _exchange(stage, target):
        shutil.rmtree(stage)  # now holds the old tree
    else:
        old = out / f"{_OLD}{top}"
        os.rename(target, old)
        os.rename(stage, target)
        shutil.rmtree(old)
    # the folder is swapped whole, but only the files whose text differs (or that come or go) changed
    return [f"{top}/{rel}" for rel in sorted(set(files) | set(before)) if before.get(rel) != files.get(rel)]


def _update_in_place(target: Path, top: str, files: dict[str, str]) -> list[str]:
    changed = []
    for rel, text in files.items():
        path = target / rel
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        _write_file(path, text)
        changed.append(f"{top}/{rel}")
    return changed + _prune(target, set(files), top)


def _prune(folder: Path, keep: set[str], top: str) -> list[str]:
    """Remove generated files under `folder` that are not in `keep`; hand-written files stay."""
    removed = []
    if not folder.is_dir():
        return removed
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if not path.is_symlink() and path.is_file() and rel not in keep and _is_generated(path):
            path.unlink()
            removed.append(f"{top}/{rel}")
    for path in sorted(folder.rglob("*"), reverse=True):
        if not path.is_symlink() and path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    return removed
