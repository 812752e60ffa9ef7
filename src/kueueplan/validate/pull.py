"""`kueueplan schemas pull`: fetch a release's CRD files, verified, into the cache `validate` consults.

Every release the schema pack covers has its files' SHA-256 pinned in the pack (taken from the same files the
pack was derived from); a download must match. A release outside the pack is fetched only with the user's own
hashes (`--sha256 FILE=HEX`, e.g. from `sha256sum` in a trusted checkout of the tag), and then exactly the files
they name. Tags must be `vX.Y.Z`, every file is capped in size, and a release is written to a temporary folder
that replaces the old one by rename once every file is verified: a failure leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import urllib.request
from pathlib import Path

from kueueplan.errors import KueueplanError
from kueueplan.validate import schemapack

URLS = {
    "kueue": "https://raw.githubusercontent.com/kubernetes-sigs/kueue/{tag}/config/components/crd/bases/{name}",
    "kuberay": "https://raw.githubusercontent.com/ray-project/kuberay/{tag}/ray-operator/config/crd/bases/{name}",
}
MAX_BYTES = 8 * 1024 * 1024  # per file; the largest release CRD (KubeRay's RayJob) is 1.4 MB
_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.yaml")  # fullmatch only
_HEX = re.compile(r"[0-9a-f]{64}")


def fetch(url: str, limit: int) -> bytes:
    """The body of `url`, at most `limit` bytes (tests replace this function: they never touch the network)."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - fixed https URLs
            length = response.headers.get("Content-Length")
            if length and length.isdigit() and int(length) > limit:
                raise KueueplanError(f"{url} is {int(length):,} bytes, over the {limit:,}-byte limit")
            return response.read(limit + 1)
    except OSError as err:
        raise KueueplanError(f"download failed: {url}: {err}", hint="check the tag and your network") from None


def parse_hashes(items: list[str]) -> dict[str, str]:
    """`--sha256 FILE=HEX` values -> {file: hex}."""
    out = {}
    for item in items:
        name, _, digest = item.partition("=")
        digest = digest.strip().lower()
        if not _FILE.fullmatch(name) or not _HEX.fullmatch(digest):
            raise KueueplanError(f"--sha256 {item!r} is not FILE=SHA256",
                                 hint="e.g. --sha256 kueue.x-k8s.io_clusterqueues.yaml=<64 hex digits>")
        out[name] = digest
    return out


def plan(project: str, tag: str, hashes: dict[str, str]) -> dict[str, str]:
    """{file name: expected sha256} to fetch for a release: the pack's pins, else the user's hashes."""
    if not schemapack.RELEASE.fullmatch(tag):
        raise KueueplanError(f"--{project} {tag!r} is not a release tag like v0.19.2",
                             hint="give the exact tag, vMAJOR.MINOR.PATCH")
    group = schemapack.PROJECTS[project]
    mine = {name: digest for name, digest in hashes.items() if name.startswith(f"{group}_")}
    pinned = schemapack.pinned_files(project, tag)
    if pinned is None:
        if not mine:
            raise KueueplanError(
                f"no pinned SHA-256 for {project} {tag}: the schema pack covers {', '.join(schemapack.releases(project))}",
                hint=f"pass the files to fetch with their hashes, --sha256 {group}_<plural>.yaml=<sha256> (from "
                     "`sha256sum` in a trusted checkout of the tag), one per file")
        return mine
    for name, digest in mine.items():
        if pinned.get(name) != digest:
            raise KueueplanError(f"--sha256 for {name} disagrees with the pinned hash of {project} {tag}")
    return pinned


def pull(kueue: str | None, kuberay: str | None, dest: Path | None = None,
         hashes: dict[str, str] | None = None) -> list[Path]:
    """Fetch and verify the releases, then write each as <dest>/<project>/<tag>/ (default dest: the cache)."""
    from kueueplan.validate.catalog import pulled_dir

    wanted = [(p, t) for p, t in (("kueue", kueue), ("kuberay", kuberay)) if t]
    plans = {(p, t): plan(p, t, hashes or {}) for p, t in wanted}  # every tag checked before any download
    written: list[Path] = []
    for (project, tag), files in plans.items():
        blobs = {name: _download(project, tag, name, digest) for name, digest in sorted(files.items())}
        target = (dest / project / tag) if dest else pulled_dir(project, tag)
        written += _install(target, blobs)
    return written


def _download(project: str, tag: str, name: str, digest: str) -> bytes:
    url = URLS[project].format(tag=tag, name=name)
    data = fetch(url, MAX_BYTES)
    if len(data) > MAX_BYTES:
        raise KueueplanError(f"{url} is over the {MAX_BYTES:,}-byte limit")
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest:
        raise KueueplanError(f"{url}: SHA-256 {actual} does not match the expected {digest}",
                             hint="the file changed upstream or in transit; nothing was written")
    return data


def _install(target: Path, blobs: dict[str, bytes]) -> list[Path]:
    """Write the files into a temporary sibling folder, then swap it in by rename."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.part-"))
    except OSError as err:
        raise KueueplanError(f"cannot write to {target.parent}: {err.strerror or err}") from None
    old = None
    try:
        for name, data in blobs.items():
            with open(staging / name, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        if target.exists() or target.is_symlink():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
        os.replace(staging, target)
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        if old is not None and not target.exists():
            os.replace(old, target)
        raise KueueplanError(f"cannot write {target}: {err.strerror or err}") from None
    if old is not None:
        if old.is_symlink():
            old.unlink()
        else:
            shutil.rmtree(old, ignore_errors=True)
    return [target / name for name in blobs]
