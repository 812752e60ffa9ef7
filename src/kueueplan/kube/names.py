"""The API server's name and label syntax (k8s.io/apimachinery/pkg/util/validation), shared by spec and validate."""

from __future__ import annotations

import re

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def dns_label_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append("must be no more than 63 characters")
    if not _DNS_LABEL.match(value):
        errs.append("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
                    "must start and end with an alphanumeric character (e.g. 'my-name')")
    return errs


def dns_subdomain_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS_SUBDOMAIN.match(value):
        errs.append("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                    "'.', and must start and end with an alphanumeric character (e.g. 'example.com')")
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """Label keys, annotation keys, resource names: [prefix/]name."""
    prefix, _, name = value.rpartition("/")
    errs = []
    if "/" in value and not prefix:
        errs.append("prefix part must be non-empty")
    elif prefix:
        errs.extend(f"prefix part {e}" for e in dns_subdomain_errors(prefix))
    if not name:
        errs.append("name part must be non-empty")
        return errs
    if len(name) > 63:
        errs.append("name part must be no more than 63 characters")
    if not _QUALIFIED_NAME.match(name):
        errs.append("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                    "with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')")
    return errs


def label_value_errors(value: str) -> list[str]:
    errs = []
    if len(value) > 63:
        errs.append(f"must be no more than 63 characters (has {len(value)})")
    if not _LABEL_VALUE.match(value):
        errs.append("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                    "'.', and must start and end with an alphanumeric character")
    return errs


# Patterns for JSON Schema (the spec's schemas) and yes/no checks for code that only needs the verdict.
DNS_LABEL_PATTERN = _DNS_LABEL.pattern
DNS_SUBDOMAIN_PATTERN = _DNS_SUBDOMAIN.pattern


def is_dns_label(value: object) -> bool:
    return isinstance(value, str) and not dns_label_errors(value)


def is_dns_subdomain(value: object) -> bool:
    return isinstance(value, str) and not dns_subdomain_errors(value)


def is_qualified_name(value: object) -> bool:
    """Label-key syntax (also resource names): [prefix/]name."""
    return isinstance(value, str) and bool(value) and not qualified_name_errors(value)
