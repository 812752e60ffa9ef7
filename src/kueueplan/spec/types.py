"""Constrained scalar types shared by the spec models: names, quantities, durations.

Each type checks its value in one before-validator (never a Union), so pydantic error locations stay plain
key paths that map back to YAML lines.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, WithJsonSchema

from kueueplan.errors import KueueplanError
from kueueplan.kube.names import (DNS_LABEL_PATTERN, DNS_SUBDOMAIN_PATTERN, is_dns_label, is_dns_subdomain,
                                  is_qualified_name, label_value_errors)
from kueueplan.kube.quantity import parse_quantity

DURATION_RE = re.compile(r"^(?:(\d+(?:\.\d+)?)(ms|s|m|h))+$")


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
        raise ValueError(f"{err.message}; {err.hint}" if err.hint else err.message) from None
    if amount < 0:
        raise ValueError(f"{value!r} is negative; quotas and requests must be >= 0")
    return value


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



def _check_duration_or_never(value: Any) -> Any:
    return value if value == "never" else _check_duration(value)


DurationOrNever = Annotated[Any, BeforeValidator(_check_duration_or_never), WithJsonSchema(
    {"anyOf": [_DURATION_SCHEMA, {"const": "never"}],
     "description": "A duration such as 90s, 15m, 1h30m, a number of seconds, or `never`"})]

DnsLabel = Annotated[str, BeforeValidator(_check_label),
                     WithJsonSchema({"type": "string", "maxLength": 63, "pattern": DNS_LABEL_PATTERN})]
DnsSubdomain = Annotated[str, BeforeValidator(_check_subdomain),
                         WithJsonSchema({"type": "string", "maxLength": 253, "pattern": DNS_SUBDOMAIN_PATTERN})]
ResourceName = Annotated[str, BeforeValidator(_check_resource_name),
                         WithJsonSchema({"type": "string", "description": "cpu, memory, nvidia.com/gpu, ..."})]
Quantity = Annotated[Any, BeforeValidator(_check_quantity), WithJsonSchema(_QUANTITY_SCHEMA)]
Duration = Annotated[Any, BeforeValidator(_check_duration), WithJsonSchema(_DURATION_SCHEMA)]
StringMap = Annotated[dict[str, str], WithJsonSchema({"type": "object", "additionalProperties": {"type": "string"}})]


def _check_label_key(key: str) -> str:
    if not is_qualified_name(key):
        raise ValueError(f"{key!r} is not a valid label key: [dns-prefix/]name, name at most 63 letters, digits, "
                         "'-', '_' or '.', starting and ending with a letter or digit")
    return key


def _check_label_value(value: str) -> str:
    if label_value_errors(value):
        raise ValueError(f"{value!r} is not a valid label value: at most 63 letters, digits, '-', '_' or '.', "
                         "starting and ending with a letter or digit")
    return value


LabelKey = Annotated[str, AfterValidator(_check_label_key)]
LabelValue = Annotated[str, AfterValidator(_check_label_value)]
LabelMap = Annotated[dict[LabelKey, LabelValue],
                     WithJsonSchema({"type": "object", "additionalProperties": {"type": "string", "maxLength": 63}})]
AnnotationMap = Annotated[dict[LabelKey, str],
                          WithJsonSchema({"type": "object", "additionalProperties": {"type": "string"}})]
