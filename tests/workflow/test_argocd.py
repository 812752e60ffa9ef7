"""Argo CD health checks (run in a real Lua interpreter when lupa is installed) and ignoreDifferences."""

from __future__ import annotations

from typing import Any

import pytest

from kueueplan.compile.argocd import argocd_cm, health_checks, health_lua, ignore_differences, with_argocd_fields


def _run(kind: str, obj: dict[str, Any]) -> dict[str, str]:
    lupa = pytest.importorskip("lupa", reason="lupa (Lua for Python) is not installed")
    lua = lupa.LuaRuntime(unpack_returned_tuples=True)
    lua.globals().obj = lua.table_from(obj, recursive=True)
    result = lua.execute(health_lua(kind))
    return {"status": result["status"], "message": result["message"]}


def _queue(active: str | None, stop: str | None = None, **status: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                           "metadata": {"name": "q"}, "spec": {}}
    if stop:
        obj["spec"]["stopPolicy"] = stop
    if active is not None:
        obj["status"] = {"conditions": [{"type": "Other", "status": "False"},
                                        {"type": "Active", "status": active, "reason": "FlavorNotFound",
                                         "message": "Can't admit new workloads: references missing ResourceFlavor(s)"}],
                         **status}
    return obj


@pytest.mark.parametrize("kind", ["ClusterQueue", "LocalQueue"])
def test_health_states(kind: str) -> None:
    assert _run(kind, _queue("True", admittedWorkloads=3, pendingWorkloads=2)) == {
        "status": "Healthy", "message": "3 admitted, 2 pending"}
    degraded = _run(kind, _queue("False"))
    assert degraded["status"] == "Degraded" and degraded["message"].startswith("FlavorNotFound: ")
    assert _run(kind, _queue(None))["status"] == "Progressing"
    assert kind in _run(kind, _queue(None))["message"]
    held = _run(kind, _queue("False", stop="HoldAndDrain"))
    assert held["status"] == "Suspended" and "HoldAndDrain" in held["message"]
    assert _run(kind, _queue("True", stop="None"))["status"] == "Healthy"


def test_argocd_cm_keys_follow_argo_convention() -> None:
    cm = argocd_cm("gitops")
    assert cm["metadata"] == {"name": "argocd-cm", "namespace": "gitops", "labels": {
        "app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd"}}
    assert set(cm["data"]) == {"resource.customizations.health.kueue.x-k8s.io_ClusterQueue",
                               "resource.customizations.health.kueue.x-k8s.io_LocalQueue"}
    assert all("return hs" in lua for lua in health_checks().values())


def test_ignore_differences_cover_autoscaler_replicas_and_merge_into_an_application() -> None:
    ray = next(e for e in ignore_differences() if e["kind"] == "RayCluster")
    assert ray["group"] == "ray.io" and ".spec.workerGroupSpecs[].replicas" in ray["jqPathExpressions"]
    app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "a"},
           "spec": {"syncPolicy": {"syncOptions": ["ServerSideApply=true"]},
                    "ignoreDifferences": [{"group": "ray.io", "kind": "RayCluster", "jsonPointers": ["/spec/suspend"]}]}}
    out = with_argocd_fields(app)
    assert app["spec"]["ignoreDifferences"][0] == {"group": "ray.io", "kind": "RayCluster",
                                                   "jsonPointers": ["/spec/suspend"]}  # input untouched
    [rc] = [e for e in out["spec"]["ignoreDifferences"] if e["kind"] == "RayCluster"]
    assert rc["jsonPointers"] == ["/spec/suspend"]
    assert rc["jqPathExpressions"] == [".spec.workerGroupSpecs[].replicas"]
    assert out["spec"]["syncPolicy"]["syncOptions"] == ["ServerSideApply=true", "RespectIgnoreDifferences=true"]
    assert with_argocd_fields(out) == out  # idempotent
