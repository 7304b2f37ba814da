from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from podfit.quantity import QuantityError, format_cpu, format_memory, parse_cpu, parse_memory, parse_quantity


@pytest.mark.parametrize(
    "value, millicores",
    [
        ("1.5", 1500),
        ("1500m", 1500),
        (1, 1000),
        (0.1, 100),
        ("0.1", 100),
        (".5", 500),
        ("2", 2000),
        ("1e3", 1_000_000),
        ("1E-3", 1),
        ("100u", 1),
        ("1n", 1),
        ("0", 0),
        ("+2", 2000),
        ("2k", 2_000_000),
        (1.5, 1500),
        ("250m", 250),
        ("1.0001", 1001),
    ],
)
def test_cpu_forms(value, millicores):
    assert parse_cpu(value) == millicores


@pytest.mark.parametrize(
    "value, nbytes",
    [
        ("2Gi", 2 * 2**30),
        ("2G", 2 * 10**9),
        ("0.5Gi", 2**29),
        ("100Mi", 100 * 2**20),
        ("1Ki", 1024),
        ("1e3", 1000),
        ("128974848", 128974848),
        ("129e6", 129_000_000),
        ("123Mi", 128974848),
        ("1.5Ki", 1536),
        ("1Ei", 2**60),
        ("500m", 1),
        (1024, 1024),
    ],
)
def test_memory_forms(value, nbytes):
    assert parse_memory(value) == nbytes


@pytest.mark.parametrize(
    "value",
    [
        "",
        "abc",
        "1.5cores",
        "1 Gi",
        "-1",
        "-500m",
        "1e",
        "Gi",
        "1.2.3",
        "1gi",
        "1KiB",
        "nan",
        "inf",
        "1e999",
        True,
        None,
        [1],
        {"a": 1},
        float("nan"),
        float("inf"),
        "1" * 70,
        "1e30Gi",
    ],
)
def test_invalid_quantities_raise_quantity_error(value):
    with pytest.raises(QuantityError):
        parse_quantity(value)


def test_float_parsing_is_exact():
    # 0.1 + 0.2 style errors must not appear: 3 × 0.1 CPU is exactly 300m
    assert sum(parse_cpu(0.1) for _ in range(3)) == 300
    assert parse_quantity("0.1") == Fraction(1, 10)


def test_huge_values_are_refused_not_saturated():
    with pytest.raises(QuantityError):
        parse_memory("1e30")
    assert parse_memory("7Ei") == 7 * 2**60  # under 2^63
    with pytest.raises(QuantityError):
        parse_memory("8Ei")  # 2^63 does not fit an int64


@given(st.integers(min_value=0, max_value=10**12))
def test_cpu_round_trip(millicores):
    assert parse_cpu(format_cpu(millicores)) == millicores


@given(st.integers(min_value=0, max_value=2**62))
def test_memory_round_trip(nbytes):
    assert parse_memory(format_memory(nbytes)) == nbytes


@pytest.mark.parametrize(
    "nbytes, exact, rounded",
    [
        (0, "0", "0"),
        (512 * 2**10, "512Ki", "0.5Mi"),
        (640 * 2**20, "640Mi", "640Mi"),
        (2**30, "1Gi", "1Gi"),
        (1536 * 2**20, "1536Mi", "1.5Gi"),
        (32 * 2**30 - 100 * 2**20, "32668Mi", "31.9Gi"),  # a 32Gi node less the system overhead
        (10**9, "1000000000", "953.7Mi"),
        (-1536 * 2**20, "-1536Mi", "-1.5Gi"),
        (2**62, "4Ei", "4Ei"),
    ],
)
def test_one_memory_formatter_exact_or_rounded(nbytes, exact, rounded):
    """Findings write a quantity equal to the value; tables and prose round to a tenth of the
    largest binary unit the value reaches (Mi at least), whole where it divides exactly."""
    assert format_memory(nbytes) == exact
    assert format_memory(nbytes, exact=False) == rounded


@given(st.integers(min_value=2**20, max_value=2**62))
def test_rounded_memory_is_within_a_twentieth_of_its_unit(nbytes):
    text = format_memory(nbytes, exact=False)
    unit = parse_memory("1" + text.lstrip("0123456789.")) if not text[-1].isdigit() else 1
    assert abs(float(text.rstrip("KMGTPEi")) * unit - nbytes) <= unit / 20
    assert unit <= nbytes < 1024 * unit


@given(st.integers(min_value=0, max_value=10**9), st.sampled_from(["m", "", "k", "M", "G"]))
def test_decimal_suffixes_scale_exactly(n, suffix):
    scale = {"m": Fraction(1, 1000), "": 1, "k": 10**3, "M": 10**6, "G": 10**9}[suffix]
    assert parse_quantity(f"{n}{suffix}") == n * scale


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=-3, max_value=9))
def test_exponent_form_equals_plain_form(n, exp):
    assert parse_quantity(f"{n}e{exp}") == n * Fraction(10) ** exp


@given(st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False, allow_infinity=False))
def test_decimal_cpu_strings_round_up_to_millicores(d):
    assert parse_cpu(str(d)) == int(d * 1000)


def test_a_collection_is_named_as_yaml_calls_it():
    """A quantity written as a mapping or a list: the reason names it so, not by the loader's own
    types (a LineDict, which keeps the lines of a mapping read from a file)."""
    from podfit.yamlio import iter_documents

    (doc,) = iter_documents("cpu: {a: 1}\nmemory: [1]\n")
    for key, what in (("cpu", "a mapping"), ("memory", "a list")):
        with pytest.raises(QuantityError) as e:
            parse_quantity(doc.data[key])
        assert e.value.reason == f"expected a number or a quantity string, got {what}"
