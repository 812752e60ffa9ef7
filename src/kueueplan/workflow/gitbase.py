"""The same path at another commit: `git archive REF -- PATH` unpacked into a temporary folder.

`git archive` reads objects only (no checkout, no worktree bookkeeping, nothing left in the repository).
A path that does not exist at REF yields an empty folder: everything on the other side is "added".
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from kueueplan.errors import KueueplanError


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError:
        raise KueueplanError("--base needs git, which is not installed") from None


def repo_root(path: Path) -> Path:
    start = path if path.is_dir() else path.parent
    done = _git(["rev-parse", "--show-toplevel"], start.resolve())
    if done.returncode != 0:
        raise KueueplanError(f"{path} is not inside a git repository", hint="--base compares with a git commit")
    return Path(done.stdout.decode().strip())


def export_at(ref: str, path: Path, dest: Path) -> Path:
    """Unpack `path` as it was at `ref` under `dest`; returns where `path` lives inside `dest`."""
    root = repo_root(path)
    rel = path.resolve().relative_to(root)
    if _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root).returncode != 0:
        raise KueueplanError(f"--base {ref!r} is not a commit in {root}",
                             hint="fetch it first (actions/checkout needs fetch-depth: 0 for the base branch)")
    target = dest / rel
    if _git(["cat-file", "-e", f"{ref}:{rel.as_posix()}"], root).returncode != 0:
        # The path is new in this change: an empty file or folder of the same name.
        if path.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("")
        else:
            target.mkdir(parents=True, exist_ok=True)
        return target
    done = _git(["archive", "--format=tar", ref, "--", rel.as_posix() or "."], root)
    if done.returncode != 0:
        raise KueueplanError(f"git archive {ref} failed: {done.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        try:
            tar.extractall(dest, filter="data")  # "data" refuses links and paths leaving dest
        except tarfile.FilterError as err:
            member = getattr(err, "tarinfo", None)
            name = member.name if member is not None else "?"
            link = f" -> {member.linkname}" if member is not None and member.linkname else ""
            raise KueueplanError(f"the base commit {ref} holds {name}{link}, a link leading out of the "
                                 "repository; kueueplan does not follow it", file=name,
                                 hint="replace the symlink with the file it points to") from None
    return target
