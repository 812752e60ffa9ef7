"""Output formats and the command line: exit codes, stdin, formats, the generated rule catalogue."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from kueueplan.cli import main
from kueueplan.report.findings import render, rules_markdown
from kueueplan.validate import validate
from kueueplan.validate.registry import all_rules

REPO = Path(__file__).resolve().parents[2]
BAD = """apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: q
  namespace: team-a
spec:
  clusterQueue: missing
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: other
spec:
  resourceGroups: []
"""
GOOD = """apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
"""


@pytest.fixture()
def bad_file(tmp_path: Path) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    return path


def _cli(args: list[str], stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", "--no-policies", *args], input=stdin)
    return result.exit_code, result.output


def test_exit_codes(bad_file: Path, tmp_path: Path, crd_paths: list[str]) -> None:
    crds = [a for c in crd_paths for a in ("--crds", c)]
    code, out = _cli([str(bad_file), *crds])
    assert code == 1 and "KP401" in out and "bad.yaml" in out and "  7: error KP401" in out
    good = tmp_path / "good.yaml"
    good.write_text(GOOD)
    assert _cli([str(good), *crds])[0] == 0
    # KP420 (no namespaceSelector) is a warning: fails only with --fail-on warning
    only_warning = tmp_path / "w.yaml"
    only_warning.write_text(GOOD.replace("  namespaceSelector: {}\n", "  stopPolicy: Hold\n"))
    assert _cli([str(only_warning), *crds])[0] == 0
    assert _cli([str(only_warning), *crds, "--fail-on", "warning"])[0] == 1
    assert _cli([str(tmp_path / "nope.yaml")])[0] == 2
    assert _cli([])[0] == 2
    assert _cli([str(good), "--select", "KP999"])[0] == 2


def test_stdin(crd_paths: list[str]) -> None:
    code, out = _cli(["-", "--crds", crd_paths[0], "-o", "json"], stdin=BAD)
    doc = json.loads(out)
    assert code == 1
    assert {f["file"] for f in doc["findings"]} == {"<stdin>"}


def test_json_schema(bad_file: Path, crd_paths: list[str]) -> None:
    result = validate([str(bad_file)], crds=crd_paths, policies=[])
    doc = json.loads(render(result, "json"))
    assert doc["version"] == 1
    assert all(set(f) == {"rule", "severity", "file", "line", "object", "message"} for f in doc["findings"])
    assert doc["summary"]["errors"] == 1 and doc["summary"]["warnings"] == 1 and not doc["summary"]["passed"]
    assert "ClusterQueue.kueue.x-k8s.io/v1beta2" in doc["summary"]["crds"]["used"]
    assert render(result, "json") == render(validate([str(bad_file)], crds=crd_paths, policies=[]), "json")


def test_sarif(bad_file: Path, crd_paths: list[str]) -> None:
    doc = json.loads(render(validate([str(bad_file)], crds=crd_paths, policies=[]), "sarif", all_rules()))
    run = doc["runs"][0]
    assert doc["version"] == "2.1.0"
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    for res in run["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"]
        assert res["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
    assert {r["level"] for r in run["results"]} == {"error", "warning"}


def test_junit(bad_file: Path, crd_paths: list[str]) -> None:
    root = ET.fromstring(render(validate([str(bad_file)], crds=crd_paths, policies=[]), "junit"))
    failures = root.findall(".//failure")
    assert root.get("failures") == "1" and [f.get("type") for f in failures] == ["KP401"]


def test_github_annotations(bad_file: Path, crd_paths: list[str]) -> None:
    out = render(validate([str(bad_file)], crds=crd_paths, policies=[]), "github").splitlines()
    assert out[0].startswith(f"::error file={bad_file},line=7,title=KP401 LocalQueue/team-a/q::")
    assert any(line.startswith("::warning ") and "KP420" in line for line in out)


def test_without_crds_the_output_names_the_schema_pack(bad_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = _cli([str(bad_file)])
    assert code == 1 and "CRDs: schema pack: Kueue v0.19.2" in out and "KP401" in out
    code, out = _cli([str(bad_file), "--kueue-version", "v0.99"])
    assert "schema and CEL checks skipped for LocalQueue.kueue.x-k8s.io: Kueue v0.99 is not in the schema pack" in out


def test_rule_catalogue_is_current() -> None:
    doc = REPO / "docs" / "rules.md"
    assert doc.is_file(), "run: kueueplan validate --list-rules -o markdown > docs/rules.md"
    assert doc.read_text() == rules_markdown(all_rules()), \
        "docs/rules.md is stale; run: kueueplan validate --list-rules -o markdown > docs/rules.md"


def test_list_rules_markdown_via_cli() -> None:
    code, out = _cli(["--list-rules", "-o", "markdown"])
    assert code == 0 and out == rules_markdown(all_rules())
    assert all(f"## {r.id}" in out for r in all_rules())


def test_schemas_pull_writes_the_cache_without_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       crd_paths: list[str]) -> None:
    """The real release files (../shared holds Kueue v0.19.2's) match the pack's pinned SHA-256."""
    import io

    from kueueplan.validate import pull as pull_module

    asked: list[str] = []

    class Response(io.BytesIO):
        headers: dict[str, str] = {}

    def fake_urlopen(url: str, timeout: int) -> io.BytesIO:
        asked.append(url)
        return Response((Path(crd_paths[0]) / url.rsplit("/", 1)[1]).read_bytes())

    monkeypatch.setattr(pull_module.urllib.request, "urlopen", fake_urlopen)
    dest = tmp_path / "crds"
    result = CliRunner().invoke(main, ["schemas", "pull", "--kueue", "v0.19.2", "--kuberay", "", "--dest", str(dest)])
    assert result.exit_code == 0, result.output
    assert asked[0] == ("https://raw.githubusercontent.com/kubernetes-sigs/kueue/v0.19.2/config/components/crd/"
                        "bases/kueue.x-k8s.io_admissionchecks.yaml")
    assert len(asked) == 11
    local = dest / "kueue" / "v0.19.2" / "kueue.x-k8s.io_localqueues.yaml"
    assert local.read_bytes() == (Path(crd_paths[0]) / "kueue.x-k8s.io_localqueues.yaml").read_bytes()
    listing = CliRunner().invoke(main, ["schemas", "list", "--crds", str(dest)])
    assert "LocalQueue.kueue.x-k8s.io: v1beta1, v1beta2" in listing.output
    assert "Kueue (schema pack): v0.4.2," in listing.output


def test_output_is_byte_identical_across_hash_seeds(crd_paths: list[str], tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    spec = REPO / "environments"
    if not spec.is_dir():
        pytest.skip("the demo spec is not in this checkout")
    (tmp_path / "bad.yaml").write_text(BAD)
    outputs = []
    for seed in ("0", "1234"):
        cmd = [sys.executable, "-c", "from kueueplan.cli import main; main()", "validate", str(spec),
               str(tmp_path / "bad.yaml"), "-o", "json", "--policies", str(REPO / "policies")]
        for c in crd_paths:
            cmd += ["--crds", c]
        env = {**os.environ, "PYTHONHASHSEED": seed}
        outputs.append(subprocess.run(cmd, capture_output=True, env=env, cwd=tmp_path, check=False).stdout)
    assert outputs[0] and outputs[0] == outputs[1]


def test_readme_rule_table_is_current() -> None:
    from kueueplan.report.catalogue import readme_with_rules

    readme = (REPO / "README.md").read_text()
    assert readme == readme_with_rules(readme), "README.md's rule table is stale; run scripts/update-generated"


def test_a_lend_only_queue_is_not_reported_as_admitting_nothing(tmp_path: Path) -> None:
    """KP420 leaves out a ClusterQueue in a cohort that no LocalQueue points at (kueueplan's lendOnly): selecting
    no namespace is its purpose. The same queue with a LocalQueue pointing at it, or outside a cohort, is reported."""
    cq = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: shared}\nspec:\n"
          "  cohortName: org\n  resourceGroups: []\n")
    lq = ("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: ns}\n"
          "spec: {clusterQueue: shared}\n")
    for text, reported in ((cq, False), (cq + lq, True), (cq.replace("  cohortName: org\n", ""), True)):
        path = tmp_path / "m.yaml"
        path.write_text(text)
        result = CliRunner().invoke(main, ["validate", "--no-policies", "--select", "KP420", str(path)])
        assert ("KP420" in result.output) == reported, (text, result.output)
