"""One fault, one finding: a CRD CEL rule (KP204) that a webhook rule checks more precisely is reported once."""

from __future__ import annotations

from pathlib import Path
import yaml

from kueueplan.validate import validate
from kueueplan.validate.engine import _without_covered_cel
from kueueplan.validate.finding import Finding
from kueueplan.validate.registry import all_rules

from ._crd import cel_validations

MANIFESTS = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  flavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: TryNextFlavor, preference: BorrowingOverPreemption}
  preemption: {reclaimWithinCohort: Never, borrowWithinCohort: {policy: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 4, borrowingLimit: 2}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
spec:
  nodeTaints: [{key: a, value: b, effect: Bogus}]
  tolerations: [{key: k, operator: Exists, value: v}]
"""


def test_every_covered_message_is_a_crd_rule(crd_paths: list[str]) -> None:
    messages = {v.get("message") for path in Path(crd_paths[0]).glob("*.yaml")
                for v in cel_validations(yaml.safe_load(path.read_text()))}
    covered = [cel for r in all_rules() for cel, _ in r.covers_cel]
    assert covered and set(covered) <= messages


def test_each_fault_is_reported_once(tmp_path: Path, crd_paths: list[str]) -> None:
    (tmp_path / "m.yaml").write_text(MANIFESTS)
    findings = validate([str(tmp_path / "m.yaml")], crds=crd_paths, policies=[]).findings
    errors = sorted((f.line, f.rule) for f in findings if f.severity == "error")
    # preference, reclaim/borrowWithinCohort, borrowingLimit without cohort, taint effect: the webhook rules;
    # the toleration value with Exists has no webhook twin: CEL reports it.
    assert errors == [(6, "KP308"), (7, "KP308"), (13, "KP306"), (19, "KP312"), (20, "KP204")]
    only_cel = validate([str(tmp_path / "m.yaml")], crds=crd_paths, policies=[], select={"KP204"}).findings
    assert len(only_cel) == 5  # without the webhook rules, CEL reports all five


def test_another_fault_of_the_covering_rule_keeps_the_cel_finding() -> None:
    cel = Finding("KP204", "error", "m.yaml", 4, "ResourceFlavor/default",
                  "spec.nodeTaints: supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'")
    label = Finding("KP312", "error", "m.yaml", 3, "ResourceFlavor/default", "nodeLabels key 'a b' is not a label key")
    effect = Finding("KP312", "error", "m.yaml", 4, "ResourceFlavor/default", "taint effect 'Bogus' is not one of ...")
    assert _without_covered_cel({cel, label}) == {cel, label}
    assert _without_covered_cel({cel, label, effect}) == {label, effect}
    elsewhere = Finding("KP312", "error", "m.yaml", 9, "ResourceFlavor/other", effect.message)
    assert cel in _without_covered_cel({cel, elsewhere})
