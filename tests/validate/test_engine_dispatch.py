"""run_rules' dispatch (validate/engine.py): each object meets the selected rules of its kind, in registration
order, chosen once per kind; a rule that raises on an object reports an internal error for that object and the
other rules still run. And tas._templates: the pod templates of a job object, depth first in document order."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from kueueplan.validate import engine
from kueueplan.validate.model import Context, make_obj
from kueueplan.validate.registry import Hit, Rule
from kueueplan.validate.rules.tas import _pod_template_annotations


def _rule(rule_id: str, kinds: tuple[str, ...], func: Any) -> Rule:
    return Rule(rule_id, "error", "4 webhook", rule_id, "", func, kinds)


def test_each_object_meets_the_selected_rules_of_its_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []

    def recording(rule_id: str) -> Any:
        def func(obj: Any, ctx: Any) -> Iterator[Hit]:
            seen.append((rule_id, obj.name))
            yield Hit(obj, (), f"{rule_id} on {obj.name}")
        return func

    def broken(obj: Any, ctx: Any) -> Iterator[Hit]:
        raise KeyError("surprise")

    rules = {"Job": [_rule("KPJ1", ("Job",), recording("KPJ1")), _rule("KPX", ("Job",), broken),
                     _rule("KPJ2", ("Job",), recording("KPJ2"))],
             "LocalQueue": [_rule("KPL", ("LocalQueue",), recording("KPL"))]}
    generic = [_rule("KPG", (), recording("KPG")), _rule("KPOFF", (), recording("KPOFF"))]
    monkeypatch.setattr(engine, "object_rules_by_kind", lambda: (rules, generic))
    monkeypatch.setattr(engine, "iter_global_rules", lambda: iter(()))
    monkeypatch.setattr(engine, "all_rules", lambda: [])
    objects = [make_obj({"kind": kind, "metadata": {"name": name}}, None, "f.yaml")
               for kind, name in (("Job", "a"), ("LocalQueue", "q"), ("Job", "b"), ("Pod", "p"))]
    findings = engine.run_rules(Context(objects=objects), [], {"KPJ1", "KPX", "KPJ2", "KPL", "KPG"})
    assert seen == [("KPG", "a"), ("KPJ1", "a"), ("KPJ2", "a"), ("KPG", "q"), ("KPL", "q"),
                    ("KPG", "b"), ("KPJ1", "b"), ("KPJ2", "b"), ("KPG", "p")]  # KPOFF not selected
    internal = [f for f in findings if f.rule == "KPX"]
    assert [f.object for f in internal] == ["Job/default/a", "Job/default/b"]
    assert all("internal error while checking this object (KeyError: 'surprise')" in f.message for f in internal)
    assert len(findings) == len(seen) + 2


def _template(annotation: str) -> dict[str, Any]:
    return {"metadata": {"annotations": {"a": annotation}}, "spec": {"containers": [{"name": "c"}]}}


def test_pod_templates_depth_first_in_document_order() -> None:
    deep: dict[str, Any] = _template("too deep")
    for _ in range(12):
        deep = {"x": deep}
    spec = {"replicatedJobs": [{"name": "one", "template": {"spec": {"template": _template("one")}}},
                               "a scalar", 3,
                               {"name": "two", "template": {"spec": {"template": _template("two")}}}],
            "metadata": {"template": _template("in metadata: not read")},
            "deep": deep, "last": _template("last")}
    obj = make_obj({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "js"},
                    "spec": spec}, None, "f.yaml")
    found = _pod_template_annotations(obj)
    assert [(path, annotations["a"]) for path, annotations in found] == [
        (("spec", "replicatedJobs", 0, "template", "spec", "template", "metadata", "annotations"), "one"),
        (("spec", "replicatedJobs", 3, "template", "spec", "template", "metadata", "annotations"), "two"),
        (("spec", "last", "metadata", "annotations"), "last")]
    assert _pod_template_annotations(obj) is found  # once per object
