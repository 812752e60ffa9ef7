"""`kueueplan import MANIFEST_DIR -o SPEC_DIR`: adopt kueueplan from existing Kueue / KubeRay manifests."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from kueueplan.cli import main
from kueueplan.errors import KueueplanError
from kueueplan.report.escape import one_line
from kueueplan.workflow.importer import build_problem, import_manifests, write_spec
from kueueplan.workflow.manifests import load_documents


@main.command(name="import")
@click.argument("manifests", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(path_type=Path),
              help="Spec folder to write.")
@click.option("--env", default="default", show_default=True, help="Name of the Environment document to create.")
@click.option("--kueue-version", default=None, help="The Kueue release the cluster runs, e.g. v0.14: written as "
              "the Environment's kueueVersion [default: none, i.e. the newest supported].")
@click.option("--force", is_flag=True, help="Replace, atomically, the files an earlier import wrote there (any other "
              "YAML file in the way: exit 2).")
def importer(manifests: tuple[Path, ...], out_dir: Path, env: str, force: bool, kueue_version: str | None) -> None:
    """Turn Kueue/KubeRay manifests (files, folders or `kubectl get -o yaml` exports) into a spec folder.

    All inputs together are one platform. The result is built in a scratch folder and compared with the input
    as `kueueplan diff` compares. Exit 0 when everything was carried, 1 when an object could not be carried (or
    would not build back as it is) or the spec references an object the input does not contain (all listed),
    2 unusable input."""
    from kueueplan.validate.catalog import check_version

    check_version("kueue", kueue_version)  # a usage error (exit 2) before anything is read
    # An output folder inside an input folder holds an earlier import's spec, not manifests: never its own input.
    docs = [d for d in load_documents(manifests) if not _below(Path(d.file), out_dir)]
    if not docs:
        raise KueueplanError("no Kubernetes objects found to import", file=str(manifests[0]),
                             hint="pass the folder or files that hold your Kueue / KubeRay manifests")
    result = import_manifests(docs, env, kueue_version)
    if not any(d.get("kind") != "Environment" for file_docs in result.files.values() for d in file_docs):
        _report(result)
        raise KueueplanError("none of the objects can be imported into a kueueplan spec", file=str(manifests[0]),
                             hint="import reads Kueue objects (ClusterQueue, LocalQueue, ResourceFlavor, Topology, "
                             "MultiKueue, ...), Namespaces, kueue-manager-config and queued workloads of every kind "
                             "Kueue integrates (RayJob, Job, JobSet, MPIJob, Deployment, ...)")
    if not result.unresolved:  # a refusal the checks above did not name: build's own words
        problem = build_problem(result, out_dir, docs)  # and what build would not reproduce: result.skipped
        if problem:
            result.unresolved.append(f"the imported spec does not build: {problem}")
    for path in write_spec(result, out_dir, force):
        click.echo(f"wrote {path}")
    _report(result)
    if kueue_version is None:
        click.echo("note: the Environment names no kueueVersion, so the spec targets the newest Kueue release "
                   "(its default install, e.g. which job kinds Kueue manages); pass --kueue-version with the "
                   "release your cluster runs, or set spec.kueueVersion", err=True)
    if not result.lossless:
        click.echo(f"import is incomplete: {len(result.skipped)} object(s) not carried, {len(result.unresolved)} "
                   "unresolved reference(s); the spec was written, fix the above before `kueueplan build`", err=True)
        sys.exit(1)


def _below(file: Path, folder: Path) -> bool:
    return Path(os.path.abspath(folder)) in Path(os.path.abspath(file)).parents


def _report(result: Any) -> None:
    # Each on one line: the names come from the manifests, and a newline could start a '::error::' in a CI log.
    for reason in result.outside:
        click.echo(one_line(f"skipped: {reason} (outside the spec: apply it as it is)"), err=True)
    for reason in result.skipped:
        click.echo(one_line(f"not carried: {reason}"), err=True)
    for reason in result.unresolved:
        click.echo(one_line(f"unresolved: {reason}"), err=True)
