"""Quantities the API server accepts but Kueue's int64 arithmetic cannot hold as written (brownfield #12)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kueueplan.kube.quantity import QuantityError, out_of_range
from kueueplan.validate import kueue
from kueueplan.validate.model import Context, Obj
from kueueplan.validate.registry import Hit, rule
from kueueplan.validate.rules.references import pod_templates


def _quantities(obj: Obj) -> Iterator[tuple[tuple[Any, ...], str, Any, bool]]:
    """(path, resource, value, is a quota) of every quota and container request/limit."""
    if obj.is_kueue() and obj.kind in ("ClusterQueue", "Cohort"):
        for q in kueue.quotas(obj):
            for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
                if q.data.get(key) is not None:
                    yield q.path + (key,), q.resource, q.data[key], True
        return
    for path, spec in pod_templates(obj):
        for field_name in ("containers", "initContainers"):
            for ci, c in enumerate(kueue.as_list(spec.get(field_name))):
                res = c.get("resources") if isinstance(c, dict) else None
                for part in ("requests", "limits"):
                    values = res.get(part) if isinstance(res, dict) else None
                    for name, value in (values.items() if isinstance(values, dict) else ()):
                        yield path + (field_name, ci, "resources", part, name), str(name), value, False


@rule("KP430", "warning", "5 hygiene", kinds=("ClusterQueue", "Cohort", "Job", "Pod", "RayJob", "RayCluster",
                                               "RayService", "Workload"))
def quantity_beyond_int64(obj: Obj, ctx: Context) -> Iterator[Hit]:
    """A quantity is beyond int64: accepted, but it does not hold what it says; the message says what it becomes.

    apimachinery caps binary-suffix values at 2^63-1 and keeps decimal ones; Kueue treats a quota that does not
    fit its int64 units (millicores for cpu) as unlimited, and clamps a request. GKE tutorials write
    `1000000000Ti` to mean "infinite": that works, as a capped, unlimited quota.

    Fails:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [memory]
        flavors:
        - name: default
          resources:
          - name: memory
            nominalQuota: 1000000000Ti
    ```

    Passes:

    ```yaml
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata:
      name: cq
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: [memory]
        flavors:
        - name: default
          resources:
          - name: memory
            nominalQuota: 1000000000Gi
    ```
    """
    for path, resource, value, quota in _quantities(obj):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        try:
            note = out_of_range(resource, value, quota)
        except QuantityError:
            continue  # not a quantity: KP3xx/schema rules report it
        if note:
            yield Hit(obj, path, f"{resource} {value!r} is beyond int64: {note}")
