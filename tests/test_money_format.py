"""Money is printed by one function (planner.money.format_money) on pages, share pages and
PDFs: rounded half up to the currency's minor unit, grouped by thousands, then the ISO code."""

from decimal import ROUND_HALF_UP, Decimal

from hypothesis import given
from hypothesis import strategies as st

from planner.engine.landed_cost import MINOR_UNITS, ConvertedAmount, Money
from planner.money import format_money

D = Decimal
AMOUNTS = st.decimals(
    min_value=D("-1e15"), max_value=D("1e15"), allow_nan=False, allow_infinity=False, places=6
)


def test_the_issue_example_jpy_and_eur():
    assert format_money(D("1234567.5"), "JPY") == "1,234,568 JPY"
    assert format_money(D("1234567.5"), "EUR") == "1,234,567.50 EUR"
    assert format_money(D("0.005"), "EUR") == "0.01 EUR"  # half up, not half even
    assert format_money(D("2.5"), "KRW") == "3 KRW"
    assert format_money(D("-0.001"), "EUR") == "0.00 EUR"
    assert format_money(None, "EUR") == "—"
    assert format_money("", "EUR") == "—"
    assert format_money("not a number", "EUR") == "—"


@given(amount=AMOUNTS, currency=st.sampled_from(sorted(MINOR_UNITS)))
def test_printed_figure_is_the_amount_rounded_half_up_to_minor_units(amount, currency):
    text = format_money(amount, currency)

    number, code = text.rsplit(" ", 1)
    assert code == currency
    digits = MINOR_UNITS[currency]
    fraction = number.partition(".")[2]
    assert len(fraction) == digits  # exactly the minor units, none for JPY/KRW/VND
    expected = amount.quantize(D(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    assert D(number.replace(",", "")) == expected
    whole = number.lstrip("-").partition(".")[0]
    groups = whole.split(",")
    assert all(len(g) == 3 for g in groups[1:]) and 1 <= len(groups[0]) <= 3


@given(amount=AMOUNTS, currency=st.sampled_from(sorted(MINOR_UNITS)))
def test_every_filter_prints_what_format_money_prints(amount, currency):
    from planner.pdf.context import money_text
    from planner.sharing.templatetags import sharing_tags
    from sourcing.templatetags import sourcing_tags

    expected = format_money(amount, currency)
    assert sourcing_tags.money(Money(amount, currency)) == expected
    assert sourcing_tags.money(amount, currency) == expected
    assert sharing_tags.money({"amount": str(amount), "currency": currency}) == expected
    assert sharing_tags.money(amount, currency) == expected
    assert money_text(amount, currency) == expected


def test_converted_amount_and_its_fx_note():
    from datetime import date

    from sourcing.templatetags.sourcing_tags import fx_note, money

    converted = ConvertedAmount(
        D("1234567.5"), "JPY", D("160.5"), date(2026, 7, 1), Money(D("7692.0"), "USD")
    )
    assert money(converted) == "1,234,568 JPY"
    assert fx_note(converted).startswith("7,692.00 USD at 1 USD = 160.5000 JPY on 2026-07-01")
