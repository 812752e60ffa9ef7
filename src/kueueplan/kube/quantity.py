"""Kubernetes resource quantities, exactly as k8s.io/apimachinery/pkg/api/resource parses and prints them.

Values are exact `Fraction`s, so no float ever decides a quota. `canonical` reproduces what the API server
stores (Quantity.String after a round trip): GitOps tools compare against that, so anything else is drift.
Kueue counts CPU in millicores and everything else in base units, rounding up (pkg/resources ResourceValue).
"""

from __future__ import annotations

import re
from fractions import Fraction

from kueueplan.errors import KueueplanError

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_FOR_EXP = {exp: suffix for suffix, exp in _DECIMAL_EXP.items()}

# The grammar from apimachinery's quantity.go: sign, digits with optional fraction, then a suffix
# (binary, decimal SI or a decimal exponent).
_QUANTITY_RE = re.compile(
    r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)
# The same grammar as the `pattern` Kubernetes writes into CRDs for resource.Quantity fields.
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
                    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
# int64 bounds apply to the stored value; the API server rejects anything beyond (with milli precision).
_MAX_ABS = Fraction(2**63 - 1)
_MAX_EXPONENT = 30  # far beyond int64 either way; refuses "1e999999999" before it costs memory
_MAX_LENGTH = 64


class QuantityError(KueueplanError):
    """A string that the API server would not accept as a resource quantity."""


def parse_quantity(value: str | int | float | Fraction) -> Fraction:
    """Return the exact value of a Kubernetes quantity in base units (cores, bytes, ...)."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity", hint="write a number such as 2, 500m or 8Gi")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return _bounded(Fraction(value), str(value))
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError(f"{value!r} is not a quantity", hint="write a finite number")
        return _bounded(Fraction(repr(value)), repr(value))
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a quantity", hint="write a string such as '500m' or '8Gi'")
    return _parse_string(value)


def _parse_string(text: str) -> Fraction:
    stripped = text.strip()
    match = _QUANTITY_RE.match(stripped) if len(stripped) <= _MAX_LENGTH else None
    if not match:
        raise QuantityError(f"{text!r} is not a valid quantity", hint=quantity_hint(stripped))
    number = Fraction(match.group("num"))
    suffix = match.group("suffix") or ""
    if suffix in _BINARY:
        return _bounded(number * _BINARY[suffix], text)
    if suffix in _DECIMAL_EXP:
        return _bounded(number * Fraction(10) ** _DECIMAL_EXP[suffix], text)
    exponent = int(suffix[1:])
    if abs(exponent) > _MAX_EXPONENT:
        raise QuantityError(f"{text!r} is out of range", hint="quantities must fit in a 64-bit integer")
    return _bounded(number * Fraction(10) ** exponent, text)


_NUMBER_THEN_WORDS = re.compile(r"^(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))\s*(?P<unit>[A-Za-z][A-Za-z/._-]*)$")
# Units people write that Kubernetes spells differently (quantities have no "B", and "K" is "k").
_UNIT_SPELLING = {"kb": "k", "mb": "M", "gb": "G", "tb": "T", "pb": "P", "kib": "Ki", "mib": "Mi", "gib": "Gi",
                  "tib": "Ti", "pib": "Pi", "ki": "Ki", "mi": "Mi", "gi": "Gi", "ti": "Ti", "k": "k", "g": "G",
                  "t": "T"}


def quantity_hint(text: str) -> str:
    """How to fix a quantity that does not parse: '8 GPUs' -> write 8 (the resource name goes in the key)."""
    match = _NUMBER_THEN_WORDS.match(text.strip())
    if match:
        num, unit = match.group("num"), match.group("unit")
        if re.fullmatch(r"[numkMGTPE]|[KMGTPE]i", unit):  # a valid suffix after a space
            return f"write {num}{unit}, without the space"
        spelled = _UNIT_SPELLING.get(unit.lower())
        if spelled is not None:
            if unit.lower().endswith("b"):
                binary = _UNIT_SPELLING.get(unit.lower()[:-1] + "i")
                also = f" (or {num}{binary}, binary)" if binary and binary != spelled else ""
                return f"write {num}{spelled}{also}: Kubernetes quantities have no 'B'"
            return f"write {num}{spelled}: quantity suffixes are case-sensitive (k, M, G, Ki, Mi, Gi)"
        return (f"write {num}: a quantity is a number with an optional suffix (500m, 8Gi); the resource name "
                f"goes in the key, e.g. nvidia.com/gpu: {num} or cpu: {num}")
    return "use a number with an optional suffix: 500m, 2, 1.5, 8Gi, 512Mi, 1k, 1e3"


def _bounded(value: Fraction, text: str) -> Fraction:
    if abs(value) > _MAX_ABS:
        raise QuantityError(f"{text!r} is out of range", hint="quantities must fit in a 64-bit integer")
    return value


def _format_of(text: str) -> str:
    """The suffix family the API server keeps when it re-serialises: binarySI, decimalSI or decimalExponent."""
    match = _QUANTITY_RE.match(text.strip())
    suffix = (match.group("suffix") if match else "") or ""
    if suffix in _BINARY:
        return "binary"
    if suffix[:1] in ("e", "E") and suffix != "E":  # "E" alone is exa (decimalSI); "E3", "e3" are exponents
        return "exponent"
    return "decimal"


def canonical(value: str | int | float | Fraction) -> str:
    """The string the API server stores for this quantity (apimachinery Quantity.String)."""
    exact = parse_quantity(value)
    fmt = _format_of(value) if isinstance(value, str) else "decimal"
    # Quantities keep at most nano precision; the server rounds up to it (away from zero, inf.RoundUp).
    nanos = _round_up(exact * 10**9)
    if nanos == 0:
        return "0"
    # apimachinery CanonicalizeBytes: BinarySI strictly between -1024 and 1024 prints as DecimalSI.
    if fmt == "binary" and nanos % 10**9 == 0 and abs(exact) >= 1024:
        return _format_binary(nanos // 10**9)
    if fmt == "binary" and nanos % 10**9 == 0:
        # Binary quantities below 1Ki are printed as decimal (apimachinery falls back to decimalSI).
        return _format_decimal(nanos, "decimal")
    return _format_decimal(nanos, "exponent" if fmt == "exponent" else "decimal")


def _format_binary(value: int) -> str:
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    for suffix, factor in sorted(_BINARY.items(), key=lambda kv: -kv[1]):
        if magnitude % factor == 0 and magnitude >= factor:
            return f"{sign}{magnitude // factor}{suffix}"
    return f"{sign}{magnitude}"


def _format_decimal(nanos: int, fmt: str) -> str:
    """Largest exponent (multiple of 3) that keeps the mantissa an integer, as apimachinery does."""
    sign = "-" if nanos < 0 else ""
    mantissa = abs(nanos)
    exponent = -9
    while mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    if fmt == "exponent":
        return f"{sign}{mantissa}" if exponent == 0 else f"{sign}{mantissa}e{exponent}"
    return f"{sign}{mantissa}{_SUFFIX_FOR_EXP[exponent]}"


def is_canonical(value: str | int | float) -> bool:
    """True when the API server would store exactly this text (no drift for GitOps diffs)."""
    try:
        return canonical(value) == (value if isinstance(value, str) else str(value))
    except QuantityError:
        return False


def _round_up(value: Fraction) -> int:
    """Round away from zero, as apimachinery does (inf.RoundUp on parse; Value/MilliValue)."""
    magnitude = -((-abs(value).numerator) // abs(value).denominator)
    return magnitude if value >= 0 else -magnitude


def is_cpu(resource_name: str) -> bool:
    return resource_name == "cpu"


def resource_value(resource_name: str, value: str | int | float | Fraction) -> int:
    """Kueue's integer for a quantity: millicores for cpu, base units otherwise, rounded up."""
    exact = parse_quantity(value)
    return _round_up(exact * 1000) if is_cpu(resource_name) else _round_up(exact)


def format_resource_value(resource_name: str, amount: int) -> str:
    """The canonical quantity string for a Kueue integer amount (inverse of `resource_value`)."""
    if is_cpu(resource_name):
        return canonical(Fraction(amount, 1000))
    decimal = canonical(Fraction(amount))
    if amount >= 1024 and amount % 1024 == 0:
        # The shorter spelling reads best: 64Gi, but 8G rather than 7812500Ki.
        return min(_format_binary(amount), decimal, key=len)
    return decimal
