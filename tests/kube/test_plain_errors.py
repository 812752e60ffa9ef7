"""YAML syntax and quantity mistakes get messages a new user can act on, at file:line:column, under the YAML
rule (KP001) even inside a spec folder; a quantity such as '8 GPUs' says what to write instead."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.kube.quantity import QuantityError, parse_quantity
from kueueplan.kube.yamlio import YamlError, load_text

REPO = Path(__file__).resolve().parents[2]
TAB = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n"


@pytest.mark.parametrize("text,where,words", [
    (TAB, (4, 1), "tabs are not allowed for indentation; use spaces"),
    ("a:\n  b: 1\n\tc: 2\n", (3, 1), "tabs are not allowed for indentation; use spaces"),
    ("command: echo a: b\n", (1, 16), "a ': ' inside a value"),
    ("a: 1\nb\nc: 2\n", (2, 1), "a ':' is missing"),
    ("a:\n  b: 1\n c: 2\n", (3, 2), "indentation does not match"),
    ("a: [1, 2\nb: 3\n", (2, 2), "a '[' opened at line 1 is not closed"),
    ("a: 'x\nb: 2\n", (1, 4), "a quote opened at line 1 is never closed"),
    ("a: @x\n", (1, 4), "a value cannot start with '@'"),
])
def test_yaml_syntax_errors_are_plain_words_at_line_and_column(text: str, where: tuple[int, int],
                                                               words: str) -> None:
    with pytest.raises(YamlError) as info:
        load_text(text, "f.yaml")
    err = info.value
    assert words in err.message and "cannot start any token" not in err.message, err.message
    assert (err.line, err.column) == where


def test_a_tab_in_a_spec_folder_is_a_yaml_finding_with_its_column(tmp_path: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    teams = spec / "teams.yaml"
    teams.write_text(teams.read_text().replace("  cohort: ml-platform\n", "\tcohort: ml-platform\n", 1))
    line = next(i for i, t in enumerate(teams.read_text().splitlines(), 1) if t.startswith("\t"))
    result = CliRunner().invoke(main, ["validate", str(spec), "--no-policies", "-o", "json"])
    assert result.exit_code == 1, result.output
    findings = json.loads(result.stdout)["findings"]
    assert [(f["rule"], Path(f["file"]).name, f["line"], f.get("column")) for f in findings] == \
        [("KP001", "teams.yaml", line, 1)]
    assert "tabs are not allowed for indentation; use spaces" in findings[0]["message"]
    text = CliRunner().invoke(main, ["validate", str(spec), "--no-policies"]).stdout
    assert f"  {line}:1: error KP001: invalid YAML: tabs are not allowed" in text
    build = CliRunner().invoke(main, ["build", str(spec), "-o", str(tmp_path / "gen")])
    assert build.exit_code == 2 and f"teams.yaml:{line}:1: invalid YAML: tabs are not allowed" in build.output


@pytest.mark.parametrize("text,fix", [
    ("8 GPUs", "write 8"), ("16 cores", "write 16"), ("64GB", "write 64G (or 64Gi, binary)"),
    ("500 m", "write 500m, without the space"), ("12gi", "write 12Gi"),
])
def test_quantity_mistakes_say_what_to_write(text: str, fix: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(text)
    assert info.value.hint is not None and fix in info.value.hint


def test_8_gpus_in_a_spec_and_in_a_manifest_get_the_hint(tmp_path: Path) -> None:
    spec = tmp_path / "environments"
    shutil.copytree(REPO / "environments", spec)
    teams = spec / "teams.yaml"
    teams.write_text(teams.read_text().replace("      nvidia.com/gpu: 8\n", "      nvidia.com/gpu: 8 GPUs\n", 1))
    build = CliRunner().invoke(main, ["build", str(spec), "-o", str(tmp_path / "gen")])
    assert build.exit_code == 2
    assert "'8 GPUs' is not a valid quantity" in build.output and "write 8" in build.output
    assert "the resource name goes in the key" in build.output
    cq = tmp_path / "cq.yaml"
    cq.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: a\nspec:\n"
                  "  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
                  "    flavors:\n    - name: f\n      resources:\n      - name: nvidia.com/gpu\n"
                  "        nominalQuota: 8 GPUs\n")
    result = CliRunner().invoke(main, ["validate", str(cq), "--no-policies", "-o", "json"])
    kp305 = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "KP305"]
    assert kp305 and "write 8" in kp305[0]["message"] and kp305[0]["line"] == 13


def test_a_pod_request_of_8_gpus_is_refused_with_the_hint(tmp_path: Path) -> None:
    """The bundled core schema accepts any string as a Quantity; the API server parses it and refuses."""
    job = tmp_path / "job.yaml"
    job.write_text("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: default\nspec:\n"
                   "  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: c\n"
                   "        image: x\n        resources:\n          requests:\n            nvidia.com/gpu: 8 GPUs\n"
                   "            cpu: 500m\n            memory: 1Gi\n")
    result = CliRunner().invoke(main, ["validate", str(job), "--no-policies", "-o", "json"])
    errors = [f for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]
    assert [(f["rule"], f["line"]) for f in errors] == [("KP101", 15)], errors
    assert "'8 GPUs' is not a quantity: write 8" in errors[0]["message"]
