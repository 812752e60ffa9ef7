"""Constrained scalar types shared by the spec models: names, quantities, durations.

Each type checks its value in one before-validator (never a Union), so pydantic error locations stay plain
key paths that map back to YAML lines.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, WithJsonSchema

from kueueplan.errors import KueueplanError
from kueueplan.kube.quantity import parse_quantity

DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME_PART = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
DURATION_RE = re.compile(r"^(?:(\d+(?:\.\d+)?)(ms|s|m|h))+$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}

DNS_LABEL_PATTERN = DNS_LABEL_RE.pattern
DNS_SUBDOMAIN_PATTERN = DNS_SUBDOMAIN_RE.pattern


def is_dns_label(value: str) -> bool:
    return isinstance(value, str) and len(value) <= 63 and bool(DNS_LABEL_RE.match(value))


def is_dns_subdomain(value: str) -> bool:
    return isinstance(value, str) and len(value) <= 253 and bool(DNS_SUBDOMAIN_RE.match(value))


def is_qualified_name(value: str) -> bool:
    """Label-key syntax (used for resource names and label keys): [prefix/]name."""
    if not isinstance(value, str) or not value:
        return False
    prefix, _, name = value.rpartition("/")
    if prefix and not is_dns_subdomain(prefix):
        return False
    return len(name) <= 63 and bool(_QUALIFIED_NAME_PART.match(name))


def _check_label(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    if not is_dns_label(value):
        raise ValueError(f"{value!r} is not a valid name: use at most 63 lower-case letters, digits and '-', "
                         "starting and ending with a letter or digit")
    return value


def _check_subdomain(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    if not is_dns_subdomain(value):
        raise ValueError(f"{value!r} is not a valid name: use lower-case letters, digits, '-' and '.', "
                         "starting and ending with a letter or digit")
    return value


def _check_resource_name(value: Any) -> str:
    if not isinstance(value, str) or not is_qualified_name(value):
        raise ValueError(f"{value!r} is not a valid resource name (e.g. cpu, memory, nvidia.com/gpu)")
    return value


def _check_quantity(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"{value!r} is not a quantity; write a number such as 2, 500m or 8Gi")
    try:
        amount = parse_quantity(value)
    except KueueplanError as err:
        raise ValueError(err.message) from None
    if amount < 0:
        raise ValueError(f"{value!r} is negative; quotas and requests must be >= 0")
    return value


def duration_seconds(value: str | int | float) -> float:
    """Seconds of a Kubernetes-style duration ('90s', '1h30m') or a plain number of seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(value))


def _check_duration(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 90s, 15m or 1h30m")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("a duration cannot be negative")
        return value
    if isinstance(value, str) and DURATION_RE.match(value):
        return value
    raise ValueError(f"{value!r} is not a duration; write e.g. 90s, 15m, 1h30m or a number of seconds")


_QUANTITY_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": 0},
        {"type": "number", "minimum": 0},
        {"type": "string",
         "pattern": r"^\+?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"},
    ],
    "description": "A Kubernetes quantity: 2, 500m, 8Gi, 1k",
}
_DURATION_SCHEMA = {
    "anyOf": [{"type": "number", "minimum": 0}, {"type": "string", "pattern": DURATION_RE.pattern}],
    "description": "A duration such as 90s, 15m, 1h30m, or a number of seconds",
}

DnsLabel = Annotated[str, BeforeValidator(_check_label),
                     WithJsonSchema({"type": "string", "maxLength": 63, "pattern": DNS_LABEL_PATTERN})]
DnsSubdomain = Annotated[str, BeforeValidator(_check_subdomain),
                         WithJsonSchema({"type": "string", "maxLength": 253, "pattern": DNS_SUBDOMAIN_PATTERN})]
ResourceName = Annotated[str, BeforeValidator(_check_resource_name),
                         WithJsonSchema({"type": "string", "description": "cpu, memory, nvidia.com/gpu, ..."})]
Quantity = Annotated[Any, BeforeValidator(_check_quantity), WithJsonSchema(_QUANTITY_SCHEMA)]
Duration = Annotated[Any, BeforeValidator(_check_duration), WithJsonSchema(_DURATION_SCHEMA)]
StringMap = Annotated[dict[str, str], WithJsonSchema({"type": "object", "additionalProperties": {"type": "string"}})]
_LABEL_VALUE_RE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _check_label_key(key: str) -> str:
    if not is_qualified_name(key):
        raise ValueError(f"{key!r} is not a valid label key: [dns-prefix/]name, name at most 63 letters, digits, "
                         "'-', '_' or '.', starting and ending with a letter or digit")
    return key


def _check_label_value(value: str) -> str:
    if len(value) > 63 or not _LABEL_VALUE_RE.match(value):
        raise ValueError(f"{value!r} is not a valid label value: at most 63 letters, digits, '-', '_' or '.', "
                         "starting and ending with a letter or digit")
    return value


LabelKey = Annotated[str, AfterValidator(_check_label_key)]
LabelValue = Annotated[str, AfterValidator(_check_label_value)]
LabelMap = Annotated[dict[LabelKey, LabelValue],
                     WithJsonSchema({"type": "object", "additionalProperties": {"type": "string", "maxLength": 63}})]
AnnotationMap = Annotated[dict[LabelKey, str],
                          WithJsonSchema({"type": "object", "additionalProperties": {"type": "string"}})]
