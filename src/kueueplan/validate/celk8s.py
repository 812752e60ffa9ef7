"""The Kubernetes CEL library on top of the `cel` engine (the one kueueplan.validate.celrules loads).

The engine (common-expression-language 0.10) has CEL's standard definitions (`size`, `contains`, `startsWith`,
`endsWith`, `matches`, macros, `has`, timestamps, durations) but none of the extension libraries the API server
adds (k8s.io/apiserver/pkg/cel/library and cel-go's `ext`). Its custom functions are called as globals or as
methods (the receiver comes first) and may carry a dotted name, so the missing ones are added here:

- strings (cel-go ext.Strings): charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split,
  substring, trim, join, reverse, format, strings.quote;
- lists (library/lists.go, ext.Lists): isSorted, sum, min, max, indexOf, lastIndexOf, slice, flatten,
  distinct, sort, lists.range;
- regex (library/regex.go): find, findAll, on RE2 (kueueplan.validate.regex) as on the server;
- quantity (library/quantity.go): quantity, isQuantity, sign, isInteger, asInteger, asApproximateFloat, add,
  sub, isGreaterThan, isLessThan, compareTo — a quantity is carried as a number (its value), as the CRD rules do;
- sets (ext.Sets): sets.contains, sets.equivalent, sets.intersects;
- urls (library/urls.go): url, isURL, getScheme, getHost, getHostname, getPort, getEscapedPath, getQuery.

Not available: the optional syntax `a.?b` / `a[?b]` and `cel.bind` (the parser rejects them), ip/cidr, semver,
authorizer. An expression using them does not compile or errors, and callers report it as not evaluated.

Functions raise on misuse (an index out of range, a non-quantity string), which makes the expression fail with
an error, as on the server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any
from urllib.parse import urlsplit

from kueueplan.kube.quantity import QuantityError, parse_quantity
from kueueplan.validate.celrules import cel


def _is_list(v: Any) -> bool:
    return isinstance(v, list | tuple)


# ---------------------------------------------------------------------------------------------- strings

def _char_at(s: str, i: int) -> str:
    if i < 0 or i > len(s):
        raise IndexError(f"index out of range: {i}")
    return s[i] if i < len(s) else ""


def _index_of(target: Any, item: Any, offset: int = 0) -> int:
    if _is_list(target):
        return next((i for i, v in enumerate(target) if v == item), -1)
    if offset < 0 or offset > len(target):
        raise IndexError(f"index out of range: {offset}")
    return target.find(item, offset)


def _last_index_of(target: Any, item: Any, offset: int | None = None) -> int:
    if _is_list(target):
        return next((i for i in range(len(target) - 1, -1, -1) if target[i] == item), -1)
    if offset is None:
        return target.rfind(item)
    if offset < 0 or offset >= max(len(target), 1):
        raise IndexError(f"index out of range: {offset}")
    return target.rfind(item, 0, offset + len(item))


def _lower_ascii(s: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in s)


def _upper_ascii(s: str) -> str:
    return "".join(c.upper() if c.isascii() else c for c in s)


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    if len(new) > len(old) and (len(s) + 1) * (len(new) + 1) > MAX_STRING:
        raise ValueError("Unsupported: replace could exceed the cost budget")
    return s.replace(old, new, n if n >= 0 else -1)


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":
        parts = list(s)
        return parts if n < 0 or n >= len(parts) else parts[:n - 1] + ["".join(parts[n - 1:])]
    return s.split(sep, n - 1 if n > 0 else -1)


def _substring(s: str, start: int, end: int | None = None) -> str:
    end = len(s) if end is None else end
    if start < 0 or end > len(s) or start > end:
        raise IndexError(f"substring({start}, {end}) out of range for length {len(s)}")
    return s[start:end]


def _trim(s: str) -> str:
    return s.strip()  # unicode white space, as strings.TrimSpace


def _join(items: list[Any], sep: str = "") -> str:
    if not all(isinstance(i, str) for i in items):
        raise TypeError("join: the list must hold strings")
    return _bounded(sep.join(items))


def _reverse(s: str) -> str:
    return s[::-1]


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


_FORMAT = re.compile(r"%(?:\.(\d+))?([sdfexXob%])")


def _format(fmt: str, args: list[Any]) -> str:
    """cel-go's string.format: %s %d %f %e %x %X %o %b, %.Nf precision."""
    it = iter(args)

    def one(m: re.Match[str]) -> str:
        prec, verb = m.group(1), m.group(2)
        if verb == "%":
            return "%"
        try:
            v = next(it)
        except StopIteration:
            raise ValueError("format: too few arguments") from None
        if verb == "s":
            return _to_string(v)
        if verb == "d":
            return str(int(v))
        if verb in "fe":
            return f"{float(v):.{min(int(prec), 100) if prec else 6}{verb}}"
        return format(int(v), {"x": "x", "X": "X", "o": "o", "b": "b"}[verb])

    return _bounded(_FORMAT.sub(one, fmt))


def _to_string(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, list):
        return "[" + ", ".join(_to_string(i) for i in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_to_string(k)}:{_to_string(x)}" for k, x in v.items()) + "}"
    return str(v)


# ---------------------------------------------------------------------------------------------- lists

def _is_sorted(items: list[Any]) -> bool:
    return all(a <= b for a, b in zip(items, items[1:]))


def _sum(items: list[Any]) -> Any:
    return sum(items) if items else 0


def _min(items: list[Any]) -> Any:
    if not items:
        raise ValueError("min called on an empty list")
    return min(items)


def _max(items: list[Any]) -> Any:
    if not items:
        raise ValueError("max called on an empty list")
    return max(items)


def _slice(items: list[Any], start: int, end: int) -> list[Any]:
    if start < 0 or end > len(items) or start > end:
        raise IndexError(f"slice({start}, {end}) out of range for length {len(items)}")
    return list(items[start:end])


def _flatten(items: list[Any], depth: int = 1) -> list[Any]:
    out: list[Any] = []
    for i in items:
        if _is_list(i) and depth > 0:
            out.extend(_flatten(list(i), depth - 1))
        else:
            out.append(i)
    return out


def _distinct(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for i in items:
        if i not in out:
            out.append(i)
    return out


def _range(n: int) -> list[int]:
    if n > 100_000:
        raise ValueError("lists.range: too long")
    return list(range(n))


# ---------------------------------------------------------------------------------------------- regex

MAX_STRING = 1_000_000  # a string a library function may build (the server's cost model bounds the same)


def _safe_pattern(pattern: str) -> Any:
    """RE2, as the API server (linear time: a PR's pattern cannot make validate spin); a pattern RE2 refuses
    (back-references, look-arounds) is reported as not evaluated."""
    from kueueplan.validate.regex import RegexError, compile_regex

    if not isinstance(pattern, str):
        raise TypeError("the pattern must be a string")
    try:
        return compile_regex(pattern)
    except RegexError as err:
        raise ValueError(f"Unsupported regex: {err}") from None


def _find(s: str, pattern: str) -> str:
    m = _safe_pattern(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    found = [m.group(0) for m in _safe_pattern(pattern).finditer(s)]
    return found if n < 0 else found[:n]


def _bounded(text: str) -> str:
    if len(text) > MAX_STRING:
        raise ValueError(f"Unsupported: a string of more than {MAX_STRING} characters exceeds the cost budget")
    return text


# ---------------------------------------------------------------------------------------------- quantity

def _to_quantity(v: Any) -> Fraction:
    if isinstance(v, bool):
        raise TypeError("not a quantity")
    if isinstance(v, int | float):
        return Fraction(v)
    return parse_quantity(v)


def _quantity(s: Any) -> float:
    if not isinstance(s, str):
        raise TypeError("quantity() takes a string")
    try:
        return float(parse_quantity(s))
    except QuantityError as err:
        raise ValueError(f"quantities must match the regular expression: {err}") from None


def _is_quantity(s: Any) -> bool:
    try:
        parse_quantity(s)
        return True
    except QuantityError:
        return False


def _sign(q: Any) -> int:
    v = _to_quantity(q)
    return (v > 0) - (v < 0)


def _is_integer(q: Any) -> bool:
    return _to_quantity(q).denominator == 1


def _as_integer(q: Any) -> int:
    v = _to_quantity(q)
    if v.denominator != 1 or abs(v) >= 2 ** 63:
        raise ValueError("cannot convert value to integer")
    return int(v)


def _add(a: Any, b: Any) -> float:
    return float(_to_quantity(a) + _to_quantity(b))


def _sub(a: Any, b: Any) -> float:
    return float(_to_quantity(a) - _to_quantity(b))


def _compare(a: Any, b: Any) -> int:
    x, y = _to_quantity(a), _to_quantity(b)
    return (x > y) - (x < y)


# ---------------------------------------------------------------------------------------------- sets, urls

def _sets_contains(a: list[Any], b: list[Any]) -> bool:
    return all(x in a for x in b)


def _sets_equivalent(a: list[Any], b: list[Any]) -> bool:
    return _sets_contains(a, b) and _sets_contains(b, a)


def _sets_intersects(a: list[Any], b: list[Any]) -> bool:
    return any(x in a for x in b)


def _url(s: str) -> str:
    if not _is_url(s):
        raise ValueError(f"URL parse error during conversion from string: {s!r}")
    return s


def _is_url(s: Any) -> bool:
    if not isinstance(s, str) or not s:
        return False
    try:
        parts = urlsplit(s)
    except ValueError:
        return False
    return bool(parts.scheme) or s.startswith("/")


def _url_part(part: str) -> Callable[[str], Any]:
    def get(s: str) -> Any:
        u = urlsplit(s)
        if part == "scheme":
            return u.scheme
        if part == "host":
            return u.netloc.rsplit("@", 1)[-1]
        if part == "hostname":
            return u.hostname or ""
        if part == "port":
            return str(u.port) if u.port is not None else ""
        if part == "path":
            return u.path
        return {k: v for k, v in _query(u.query).items()}
    return get


def _query(q: str) -> dict[str, list[str]]:
    from urllib.parse import parse_qs

    return {k: list(v) for k, v in parse_qs(q, keep_blank_values=True).items()}


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "charAt": _char_at, "indexOf": _index_of, "lastIndexOf": _last_index_of, "lowerAscii": _lower_ascii,
    "upperAscii": _upper_ascii, "replace": _replace, "split": _split, "substring": _substring, "trim": _trim,
    "join": _join, "reverse": _reverse, "format": _format, "strings.quote": _quote,
    "isSorted": _is_sorted, "sum": _sum, "min": _min, "max": _max, "slice": _slice, "flatten": _flatten,
    "distinct": _distinct, "sort": lambda items: sorted(items), "lists.range": _range,
    "find": _find, "findAll": _find_all,
    "quantity": _quantity, "isQuantity": _is_quantity, "sign": _sign, "isInteger": _is_integer,
    "asInteger": _as_integer, "asApproximateFloat": lambda q: float(_to_quantity(q)), "add": _add, "sub": _sub,
    "isGreaterThan": lambda a, b: _compare(a, b) > 0, "isLessThan": lambda a, b: _compare(a, b) < 0,
    "compareTo": _compare,
    "sets.contains": _sets_contains, "sets.equivalent": _sets_equivalent, "sets.intersects": _sets_intersects,
    "url": _url, "isURL": _is_url, "getScheme": _url_part("scheme"), "getHost": _url_part("host"),
    "getHostname": _url_part("hostname"), "getPort": _url_part("port"), "getEscapedPath": _url_part("path"),
    "getQuery": _url_part("query"),
}

_CALL = re.compile(r"([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?)\s*\(")


def functions_used(expression: str) -> dict[str, Callable[..., Any]]:
    """The library functions an expression may call (registering only these keeps the context cheap)."""
    names: set[str] = set()
    for m in _CALL.finditer(expression):
        full = m.group(1)
        names.add(full)
        names.add(full.rsplit(".", 1)[-1])
    return {n: f for n, f in FUNCTIONS.items() if n in names}


def context(variables: dict[str, Any], expression: str) -> Any:
    """A `cel.Context` holding `variables` and the library functions `expression` names."""
    ctx = cel.Context(variables)
    for name, func in functions_used(expression).items():
        ctx.add_function(name, func)
    return ctx


# ---------------------------------------------------------------------------------------------- cost bound

_MACRO = re.compile(r"\.\s*(all|exists|exists_one|map|filter)\s*\(")
PER_CALL_LIMIT = 1_000_000  # k8s.io/apiserver/pkg/apis/cel: PerCallLimit, the cost one expression may use


def macro_depth(expression: str) -> int:
    """How deeply comprehension macros nest in `expression` (string literals skipped)."""
    depth = best = 0
    stack: list[bool] = []
    i, n = 0, len(expression)
    while i < n:
        c = expression[i]
        if c in "'\"":
            end = expression.find(c, i + 1)
            while end > 0 and expression[end - 1] == "\\":
                end = expression.find(c, end + 1)
            i = n if end < 0 else end + 1
            continue
        if c == ".":
            m = _MACRO.match(expression, i)
            if m:
                stack.append(True)
                depth += 1
                best = max(best, depth)
                i = m.end()
                continue
        if c == "(":
            stack.append(False)
        elif c == ")" and stack:
            if stack.pop():
                depth -= 1
        i += 1
    return best


def estimated_cost(expression: str, largest: int, longest_string: int = 0) -> float:
    """An upper bound in the spirit of the API server's cost model: each nested comprehension multiplies the
    expression's size by the longest collection it could range over; each concatenation may copy the longest
    string."""
    depth = macro_depth(expression)
    base = float(len(expression)) * float(largest + 1) ** depth if depth else float(len(expression))
    return base + expression.count("+") * float(longest_string) / 16


def within_budget(expression: str, largest: int, longest_string: int = 0) -> bool:
    return estimated_cost(expression, largest, longest_string) <= PER_CALL_LIMIT and not math.isinf(largest)


def value_size(value: Any, limit: int = 200_000) -> tuple[int, int]:
    """(longest collection, longest string) inside `value`, walking at most `limit` nodes."""
    best, text, todo, seen = 0, 0, [value], 0
    while todo and seen < limit:
        v = todo.pop()
        seen += 1
        if isinstance(v, dict):
            best = max(best, len(v))
            todo.extend(v.values())
            todo.extend(k for k in v if isinstance(k, str))
        elif isinstance(v, list | tuple):
            best = max(best, len(v))
            todo.extend(v)
        elif isinstance(v, str | bytes):
            text = max(text, len(v))
    return (best if seen < limit else max(best, limit)), text
