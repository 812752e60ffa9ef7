"""Kubernetes resource quantities, exactly as k8s.io/apimachinery/pkg/api/resource parses and prints them.

Values are exact `Fraction`s, so no float ever decides a quota. `canonical` reproduces what the API server
stores (Quantity.String after a round trip): GitOps tools compare against that, so anything else is drift.
Kueue counts CPU in millicores and everything else in base units, rounding up (pkg/resources ResourceValue).
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from kueueplan.errors import KueueplanError

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_BINARY_EXP = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_FOR_EXP = {exp: suffix for suffix, exp in _DECIMAL_EXP.items()}

# apimachinery's parseQuantityString (k8s.io/apimachinery/pkg/api/resource/quantity.go), as a regular
# expression: an optional sign, digits, an optional "." and digits (either part may be empty: "1.", ".5",
# "+" and "." parse), then the suffix scan: letters of "eEinumkKMGTP", an optional sign, digits.
# Which suffixes mean something is decided afterwards, as quantitySuffixer.interpret does.
_QUANTITY_RE = re.compile(
    r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:(?P<dot>\.)(?P<frac>[0-9]*))?"
    r"(?P<suffix>[eEinumkKMGTP]*[+-]?[0-9]*)\Z"
)
# The same grammar as the `pattern` Kubernetes writes into CRDs for resource.Quantity fields.
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?"
                    r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")
_GO_INT64 = re.compile(r"[+-]?[0-9]+\Z")  # strconv.ParseInt(s, 10, 64), range checked below
MAX_INT64 = 2**63 - 1
_MAX_ABS = Fraction(MAX_INT64)  # apimachinery's maxAllowed: the cap of binary-suffix values
_NANO = Fraction(1, 10**9)
# Bounds on hostile input (apimachinery has none, and would allocate a 10^(2^31)-digit number): text up to
# 1024 characters, and values up to 10^1000, far beyond any quota. Tinier values than 1n need no bound: they
# round up to 1n whatever their exponent.
_MAX_LENGTH = 1024
_MAX_EXPONENT = 1000
_BOUND = 10**_MAX_EXPONENT


class QuantityError(KueueplanError):
    """A string that the API server would not accept as a resource quantity."""


def parse_quantity(value: str | int | float | Fraction) -> Fraction:
    """The exact value of a Kubernetes quantity in base units (cores, bytes, ...), as the API server holds it:
    rounded up to 1n, binary-suffix values capped at 2^63-1, decimal values not capped."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity", hint="write a number such as 2, 500m or 8Gi")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        # A JSON/YAML number reaches the API server as its decimal text (Quantity.UnmarshalJSON).
        if abs(value) > _BOUND:
            raise QuantityError(f"{value!r} is out of range", hint=f"kueueplan reads values up to 10^{_MAX_EXPONENT}")
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError(f"{value!r} is not a quantity", hint="write a finite number")
        return _parse_string(repr(value))
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a quantity", hint="write a string such as '500m' or '8Gi'")
    return _parse_string(value)


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


def _invalid(text: str) -> QuantityError:
    return QuantityError(f"{text!r} is not a valid quantity", hint=quantity_hint(text))


def _interpret(suffix: str, text: str) -> tuple[int, int, str]:
    """quantitySuffixer.interpret: (base, exponent, format) of a suffix, or an error (ErrSuffix)."""
    if suffix in _DECIMAL_EXP:
        return 10, _DECIMAL_EXP[suffix], "decimal"
    if suffix in _BINARY_EXP:
        return 2, _BINARY_EXP[suffix], "binary"
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT64.match(suffix[1:]):
        parsed = int(suffix[1:])
        if -(2**63) <= parsed <= MAX_INT64:
            return 10, (parsed + 2**31) % 2**32 - 2**31, "exponent"  # Go's int32(parsed) wraps
    raise _invalid(text)


@lru_cache(maxsize=4096)  # a platform repeats a few quantity strings ("4", "16Gi") in every pod of every copy
def _parse_string(text: str) -> Fraction:
    value = _parse_text(text)
    if abs(value) > _BOUND:  # e.g. 99999E998: digits before a large exponent
        raise QuantityError(f"{text!r} is out of range", hint=f"kueueplan reads values up to 10^{_MAX_EXPONENT}")
    return value


def _parse_text(text: str) -> Fraction:
    stripped = text.strip()  # Quantity.UnmarshalJSON trims spaces before ParseQuantity
    match = _QUANTITY_RE.match(stripped) if 0 < len(stripped) <= _MAX_LENGTH else None
    if not match:
        if len(stripped) > _MAX_LENGTH:
            raise QuantityError(f"quantity {stripped[:20]!r}... is longer than {_MAX_LENGTH} characters")
        raise _invalid(text)
    sign = -1 if match.group("sign") == "-" else 1
    int_part, frac = match.group("int"), match.group("frac") or ""
    rest = stripped[len(match.group("sign")):]
    if rest.strip("0") == "":
        return Fraction(0)  # "0", "-", "+", "000": the zero loop reaches the end and returns 0
    base, exponent, fmt = _interpret(match.group("suffix"), text)
    num = int_part.lstrip("0") or "0"
    digits = int((num + frac) or "0")
    if base == 10 and digits and exponent - len(frac) > _MAX_EXPONENT:
        raise QuantityError(f"{text!r} is out of range", hint=f"kueueplan reads values up to 10^{_MAX_EXPONENT}")
    if _fast_path(fmt, exponent, num, frac):
        # int64Amount: exact, no rounding (its scale is at least nano)
        if base == 2:
            return Fraction(sign * digits * 2**exponent)
        return sign * digits * Fraction(10) ** (exponent - len(frac))
    if not (int_part or frac):
        raise _invalid(text)  # inf.Dec.SetString needs a digit: ".e-10", "Pi", "-Ei"
    if digits == 0:
        return Fraction(0)
    if base == 2:
        magnitude = Fraction(digits, 10 ** len(frac)) * 2**exponent
    else:
        scale = exponent - len(frac)
        if scale < -2 * _MAX_LENGTH:
            return sign * _NANO  # far below 1n: rounds up to 1n, as apimachinery does
        magnitude = digits * Fraction(10) ** scale
    nanos = -((-magnitude.numerator * 10**9) // magnitude.denominator)  # round up to 1n (inf.RoundUp)
    magnitude = Fraction(nanos, 10**9)
    if base == 2 and magnitude > _MAX_ABS:
        magnitude = _MAX_ABS  # "The max is just a simple cap", for binary suffixes only
    return sign * magnitude


def _fast_path(fmt: str, exponent: int, num: str, frac: str) -> bool:
    """ParseQuantity's int64Amount path (exact); otherwise its inf.Dec path (rounds to 1n, caps binary)."""
    if fmt == "binary":
        return not frac and 15 - len(num) - (exponent * 3) // 10 - 1 >= 0
    return 18 - len(num) - len(frac) >= 0 and exponent - len(frac) >= -9


def capped(value: str | int | float) -> bool:
    """True when apimachinery caps this binary-suffix quantity at 2^63-1 (it does not reject it)."""
    if not isinstance(value, str):
        return False
    match = _QUANTITY_RE.match(value.strip())
    if not match or match.group("suffix") not in _BINARY_EXP:
        return False
    number = match.group("int") + ("." + match.group("frac") if match.group("frac") else "")
    try:
        return Fraction(number or "0") * _BINARY[match.group("suffix")] > _MAX_ABS
    except ValueError:
        return False


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
    """Kueue's integer for a request: millicores for cpu, base units otherwise, rounded up, clamped to int64
    (pkg/resources ResourceValue: SafeMilliValue / SafeValue)."""
    exact = parse_quantity(value)
    amount = _round_up(exact * 1000) if is_cpu(resource_name) else _round_up(exact)
    return max(-(2**63), min(MAX_INT64, amount))


# pkg/resources AmountFromQuantity: a quota at or above these is Kueue's Unlimited (math.MaxInt64).
_UNLIMITED_CPU = Fraction(MAX_INT64 // 1000)
_UNLIMITED_OTHER = Fraction(MAX_INT64)


def quota_value(resource_name: str, value: str | int | float | Fraction) -> int:
    """Kueue's integer for a quota (nominal, borrowing or lending limit): as `resource_value`, but a value
    whose Kueue units would not fit an int64 is Unlimited (2^63-1), never wrapped or clamped below it."""
    exact = parse_quantity(value)
    if exact >= (_UNLIMITED_CPU if is_cpu(resource_name) else _UNLIMITED_OTHER):
        return MAX_INT64
    return resource_value(resource_name, exact)


def out_of_range(resource_name: str, value: str | int | float, quota: bool) -> str | None:
    """What an out-of-range quantity becomes, in words (for a warning), or None when it is in range."""
    exact = parse_quantity(value)
    notes = []
    if capped(value):
        notes.append("the API server caps binary-suffix quantities at 2^63-1 (9223372036854775807)")
    units = exact * 1000 if is_cpu(resource_name) else exact
    unit = "millicores" if is_cpu(resource_name) else "base units"
    if quota and exact >= (_UNLIMITED_CPU if is_cpu(resource_name) else _UNLIMITED_OTHER):
        notes.append(f"in {unit} it does not fit Kueue's int64 arithmetic, so Kueue treats this quota as unlimited")
    elif not quota and abs(units) > MAX_INT64:
        notes.append(f"in {unit} it does not fit Kueue's int64 arithmetic, so Kueue counts "
                     f"{resource_value(resource_name, exact)} {unit}")
    return "; ".join(notes) or None


def format_resource_value(resource_name: str, amount: int) -> str:
    """The canonical quantity string for a Kueue integer amount (inverse of `resource_value`)."""
    if is_cpu(resource_name):
        return canonical(Fraction(amount, 1000))
    decimal = canonical(Fraction(amount))
    if amount >= 1024 and amount % 1024 == 0:
        # The shorter spelling reads best: 64Gi, but 8G rather than 7812500Ki.
        return min(_format_binary(amount), decimal, key=len)
    return decimal
