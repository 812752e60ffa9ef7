"""kustomize-shaped folders: every valid kustomization form is kustomize's build file, never a finding; the
output says the folder's findings are on raw (not rendered) objects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kueueplan.report.findings import render
from kueueplan.validate import validate

NAMESPACE = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n"
BARE = "resources:\n- namespace.yaml\nnamePrefix: prod-\ncommonLabels:\n  team: a\n"
TYPED = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- namespace.yaml\n"
COMPONENT = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: p.yaml\n"
NO_KIND = "apiVersion: kustomize.config.k8s.io/v1beta1\nresources:\n- namespace.yaml\n"


@pytest.mark.parametrize(("name", "text"), [("kustomization.yaml", BARE), ("kustomization.yml", TYPED),
                                            ("kustomization.yaml", COMPONENT), ("Kustomization", BARE),
                                            ("kustomization.yaml", NO_KIND)])
def test_no_kustomization_form_gets_a_finding(tmp_path: Path, name: str, text: str) -> None:
    folder = tmp_path / "overlay"
    folder.mkdir()
    (folder / name).write_text(text)
    (folder / "namespace.yaml").write_text(NAMESPACE)
    result = validate([str(tmp_path)], crds=None, policies=[])
    assert [f for f in result.findings if name in f.file] == []
    assert result.findings == [] and result.objects == 1
    assert result.kustomizations == [str(folder / name)]
    text_out = render(result, "text")
    assert "is a kustomize folder" in text_out and "raw" in text_out and f"kustomize build {folder}" in text_out
    summary = json.loads(render(result, "json"))["summary"]
    assert summary["kustomizations"] == [{"file": str(folder / name), "objects": "raw"}]


def test_bare_kustomization_on_stdin_is_not_an_object() -> None:
    result = validate(["-"], stdin_text=BARE + "---\n" + NAMESPACE, crds=None, policies=[])
    assert result.findings == [] and result.objects == 1


def test_a_document_without_kind_that_is_not_a_kustomization_is_still_flagged() -> None:
    result = validate(["-"], stdin_text="metadata:\n  name: x\nspec: {}\n", crds=None, policies=[])
    assert [f.rule for f in result.findings] == ["KP002"]


def test_plain_folder_has_no_kustomize_note(tmp_path: Path) -> None:
    (tmp_path / "ns.yaml").write_text(NAMESPACE)
    result = validate([str(tmp_path)], crds=None, policies=[])
    assert result.kustomizations == [] and "kustomize folder" not in render(result, "text")
