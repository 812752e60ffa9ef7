"""Reading Kueue objects of both API versions, just enough for the rules (paths kept for line numbers)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from kueueplan.kube.podsets import PRIORITY_LABEL, QUEUE_LABEL
from kueueplan.kube.quantity import QuantityError, canonical, parse_quantity
from kueueplan.validate.model import Obj

MAX_EXEC_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
ELASTIC_ANNOTATION = "kueue.x-k8s.io/elastic-job"
MAX_POD_SETS = 18


def cohort_of(obj: Obj) -> tuple[str | None, tuple[str, ...]]:
    """A ClusterQueue's cohort name and its path (`cohortName` in v1beta2, `cohort` in v1beta1)."""
    spec = obj.spec
    for key in ("cohortName", "cohort"):
        value = spec.get(key)
        if isinstance(value, str) and value:
            return value, ("spec", key)
    return None, ("spec", "cohortName")


def parent_of(obj: Obj) -> str | None:
    """A Cohort's parent (`parentName`; v1beta1 also `parent`)."""
    for key in ("parentName", "parent"):
        value = obj.spec.get(key)
        if isinstance(value, str) and value:
            return value
    return None


@dataclass(frozen=True)
class Quota:
    group: int
    flavor: str
    resource: str
    data: dict[str, Any]
    path: tuple[str | int, ...]  # path of the resources[] entry


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_list(value: Any) -> list[Any]:
    """A list field as a list; anything else (a typo'd scalar, a mapping) as empty — the schema reports it."""
    return value if isinstance(value, list) else []


def resource_groups(obj: Obj) -> list[tuple[int, dict[str, Any]]]:
    return [(i, g) for i, g in enumerate(_list(obj.spec.get("resourceGroups"))) if isinstance(g, dict)]


def covered(group: dict[str, Any]) -> list[str]:
    return [r for r in _list(group.get("coveredResources")) if isinstance(r, str)]


def flavors(group: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, f) for i, f in enumerate(_list(group.get("flavors"))) if isinstance(f, dict)]


def quotas(obj: Obj) -> list[Quota]:
    """Every flavor×resource quota entry of a ClusterQueue or Cohort (computed once per object)."""
    cached = obj.cache.get("quotas")
    if cached is None:
        cached = obj.cache["quotas"] = list(_quotas(obj))
    return cached


def _quotas(obj: Obj) -> Iterator[Quota]:
    for gi, group in resource_groups(obj):
        for fi, flavor in flavors(group):
            for ri, res in enumerate(_list(flavor.get("resources"))):
                if isinstance(res, dict):
                    yield Quota(gi, str(flavor.get("name", "")), str(res.get("name", "")), res,
                                ("spec", "resourceGroups", gi, "flavors", fi, "resources", ri))


def flavor_names(obj: Obj) -> list[tuple[str, tuple[str | int, ...]]]:
    out = []
    for gi, group in resource_groups(obj):
        for fi, flavor in flavors(group):
            if isinstance(flavor.get("name"), str):
                out.append((flavor["name"], ("spec", "resourceGroups", gi, "flavors", fi, "name")))
    return out


def admission_check_refs(obj: Obj) -> list[tuple[str, tuple[str | int, ...]]]:
    """Admission checks a ClusterQueue names: v1beta2 strategy rules, v1beta1 also `spec.admissionChecks`."""
    out: list[tuple[str, tuple[str | int, ...]]] = []
    for i, name in enumerate(_list(obj.spec.get("admissionChecks"))):
        if isinstance(name, str):
            out.append((name, ("spec", "admissionChecks", i)))
    strategy = obj.spec.get("admissionChecksStrategy")
    if isinstance(strategy, dict):
        for i, check in enumerate(_list(strategy.get("admissionChecks"))):
            if isinstance(check, dict) and isinstance(check.get("name"), str):
                out.append((check["name"], ("spec", "admissionChecksStrategy", "admissionChecks", i, "name")))
    return out


def is_managed(obj: Obj) -> bool:
    """A job Kueue manages: it carries a queue-name label (default LocalQueue defaulting aside)."""
    return QUEUE_LABEL in obj.labels


@lru_cache(maxsize=65536)
def _quantity_cached(kind: type, value: Any) -> Fraction | None:
    try:
        return parse_quantity(value)
    except QuantityError:
        return None


def quantity(value: Any) -> Fraction | None:
    """parse_quantity, memoised (platforms repeat the same few quota strings thousands of times)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return _quantity_cached(type(value), value)


@lru_cache(maxsize=65536)
def canonical_form(kind: type, value: Any) -> str | None:
    """The API server's canonical text of a quantity, or None if it is not one (memoised)."""
    try:
        return canonical(value)
    except QuantityError:
        return None
