"""The sizing table's fast number filters print exactly what floatformat (and intcomma) print."""

import math

import pytest
from django.contrib.humanize.templatetags.humanize import intcomma
from django.template.defaultfilters import floatformat
from django.utils import translation
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.templatetags.planner_numbers import fixed, grouped

NUMBERS = st.one_of(
    st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(10**9), max_value=10**9),
    st.sampled_from([0.5, 1.5, 2.5, -0.5, -0.04, 0.045, 0.005, 1234.5, 999.95, 1e-7]),
)


@pytest.fixture(autouse=True)
def english():
    with translation.override("en-gb"):
        yield


@settings(max_examples=300, deadline=None)
@given(value=NUMBERS, digits=st.sampled_from([0, 1, 2]))
def test_fixed_is_floatformat(value, digits):
    with translation.override("en-gb"):
        assert fixed(value, digits) == floatformat(value, digits)


@settings(max_examples=300, deadline=None)
@given(value=NUMBERS, digits=st.sampled_from([0, 1, 2]))
def test_grouped_is_floatformat_then_intcomma(value, digits):
    with translation.override("en-gb"):
        assert grouped(value, digits) == intcomma(floatformat(value, digits))


@pytest.mark.parametrize("value", [None, "", "n/a", math.inf, -math.inf])
def test_what_is_not_a_finite_number_gets_djangos_own_answer(value):
    assert fixed(value, 1) == floatformat(value, 1)
    assert grouped(value, 0) == intcomma(floatformat(value, 0))
