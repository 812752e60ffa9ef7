"""Quantities against apimachinery's own expectations (resource/quantity_test.go) and properties."""

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from kueueplan.kube.quantity import (
    QuantityError, canonical, format_resource_value, is_canonical, parse_quantity, resource_value,
)

# (input, what the API server stores) — cases from apimachinery's TestQuantityParse / TestQuantityString.
CANONICAL = [
    ("0", "0"), ("1", "1"), ("1000m", "1"), ("12000m", "12"), ("1000", "1k"), ("0.001", "1m"),
    ("1.5", "1500m"), ("500m", "500m"), ("1024Ki", "1Mi"), ("1Gi", "1Gi"), ("0.5Gi", "512Mi"),
    ("1.5Gi", "1536Mi"), ("100Mi", "100Mi"), ("1e3", "1e3"), ("1E3", "1e3"), ("1.5e3", "1500"),
    ("1e-3", "1e-3"), ("8G", "8G"), ("8000M", "8G"), ("19531250Ki", "19531250Ki"), ("1Ki", "1Ki"),
    ("512Ki", "512Ki"), ("1023", "1023"), ("1536", "1536"), ("0.1m", "100u"), ("1n", "1n"),
    ("1.1Ki", "1126400m"), ("+1", "1"), ("-1", "-1"), ("1k", "1k"), ("100k", "100k"), (".5", "500m"),
]


@pytest.mark.parametrize("text,expected", CANONICAL)
def test_canonical_matches_apimachinery(text: str, expected: str) -> None:
    assert canonical(text) == expected
    assert is_canonical(expected)
    assert is_canonical(text) == (text == expected)


@pytest.mark.parametrize("bad", ["", "abc", "1Kx", "1.2.3", "--1", "1 Gi", "1e", "Gi", "1e99999", "9" * 80, "1ki"])
def test_invalid_quantities_are_refused(bad: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)


@pytest.mark.parametrize("bad", [True, None, [], float("nan"), float("inf"), 2**70])
def test_non_quantity_types_are_refused(bad: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)  # type: ignore[arg-type]


def test_kueue_units_round_up() -> None:
    assert resource_value("cpu", "500m") == 500
    assert resource_value("cpu", "0.0001") == 1  # below a millicore still counts as one
    assert resource_value("memory", "1.5") == 2
    assert resource_value("nvidia.com/gpu", 2) == 2
    assert resource_value("memory", "1Gi") == 2**30


def test_format_resource_value_is_canonical() -> None:
    assert format_resource_value("cpu", 2500) == "2500m"
    assert format_resource_value("cpu", 2000) == "2"
    assert format_resource_value("memory", 2**31) == "2Gi"
    assert format_resource_value("memory", 1000) == "1k"


_numbers = st.fractions(min_value=0, max_value=10**12, max_denominator=10**9)
_suffixes = st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "e3", "e-3"])


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=999), _suffixes)
def test_canonical_is_idempotent_and_value_preserving(whole: int, frac: int, suffix: str) -> None:
    text = f"{whole}.{frac:03d}{suffix}" if frac else f"{whole}{suffix}"
    try:
        value = parse_quantity(text)
    except QuantityError:
        return  # out of int64 range: refused, never a crash
    once = canonical(text)
    assert canonical(once) == once
    # The stored value is the input rounded up to nano precision.
    assert parse_quantity(once) == Fraction(-((-value * 10**9).numerator // (value * 10**9).denominator), 10**9)


@given(_numbers)
def test_resource_value_round_trips_for_cpu(value: Fraction) -> None:
    milli = resource_value("cpu", value)
    assert milli >= value * 1000
    assert resource_value("cpu", format_resource_value("cpu", milli)) == milli


@given(st.text(max_size=40))
def test_parser_never_crashes(text: str) -> None:
    try:
        parse_quantity(text)
    except QuantityError:
        pass
