"""The quote's commercial fields stay in their domain ranges (``planner.engine.limits``):
markups 0-1,000 %, fee quantity 0.01-10,000, fee price not negative, payment milestones each
above 0 and at most 100 % adding up to exactly 100 %, payment within 0-365 days and validity
1-365 days. The page refuses a value outside next to its field and saves nothing; the model's
own validation (the API, imports, the admin) refuses it with the same reason."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

D = Decimal
FEE_QUANTITY = "Between 0.01 and 10,000 units: a fee is sold in days"
FEE_PRICE = "Between 0 and 99,999,999,999,999 in the plan's currency: a fee adds to the quote"
VALIDITY = "Between 1 and 365 days: a quote is valid for at most a year."
DUE = "Between 0 and 365 days: from payable on receipt to a year after the invoice"
MARKUP = "Between 0 and 1,000 %: a markup adds to the landed cost"


def _terms(**changes) -> dict[str, str]:
    data = {
        "markup_pct": "10", "payment_milestones": "40 % on order\n60 % on delivery",
        "payment_due_days": "30", "delivery_terms": "DDP Frankfurt",
        "warranty_terms": "36 months", "validity_days": "30",
    }  # fmt: skip
    return data | changes


def _fee(**changes) -> dict[str, str]:
    data = {"kind": "design", "description": "Design", "quantity": "12", "unit": "days",
            "unit_price": "1200"}  # fmt: skip
    return data | changes


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("unit_price", "-5", FEE_PRICE),
        ("quantity", "0", FEE_QUANTITY),
        ("quantity", "-1", FEE_QUANTITY),
        ("quantity", "10001", FEE_QUANTITY),
        # Ten million does not fit the stored digits, which say so first.
        ("quantity", "10000000", "Ensure that there are no more than 6 digits before the"),
    ],
)
def test_a_fee_outside_its_range_is_refused(signed_in, plan, field, value, message):
    from sourcing.models import QuoteFee

    response = signed_in.post(
        reverse("sourcing:quote_fee_add", args=[plan.pk]), _fee(**{field: value})
    )
    assert response.status_code == 400
    assert message in response.content.decode().replace("&#x27;", "'")
    assert not QuoteFee.objects.filter(plan=plan).exists()


def test_a_fee_at_its_bounds_is_saved(signed_in, plan):
    from sourcing.models import QuoteFee

    add = reverse("sourcing:quote_fee_add", args=[plan.pk])
    assert signed_in.post(add, _fee(quantity="10000", unit_price="0")).status_code == 302
    # 0.01 itself passes: the bound is compared as a decimal, not as the float 0.01 (a
    # shade above it).
    assert signed_in.post(add, _fee(quantity="0.01", unit_price="950.50")).status_code == 302
    assert sorted(QuoteFee.objects.filter(plan=plan).values_list("quantity", "unit_price")) == [
        (D("0.01"), D("950.5")),
        (D("10000"), D(0)),
    ]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("validity_days", "0", VALIDITY),
        ("validity_days", "5000", VALIDITY),
        ("payment_due_days", "400", DUE),
        ("payment_due_days", "-1", "Ensure this value is greater than or equal to 0."),
        ("markup_pct", "-1", MARKUP),
        ("category_server", "-0.01", MARKUP),
        (
            "payment_milestones",
            "60 % on order\n50 % on delivery",
            "The payment milestones add up to 110 %; they must add up to 100 %.",
        ),
        (
            "payment_milestones",
            "0 % on order\n100 % on delivery",
            "A milestone of 0 % is refused: each is above 0 and at most 100 %.",
        ),
        (
            "payment_milestones",
            "101 % on order",
            "A milestone of 101 % is refused: each is above 0 and at most 100 %.",
        ),
        (
            "payment_milestones",
            "-10 % on order\n110 % on delivery",
            "start each milestone with its percentage",
        ),
    ],
)
def test_quote_terms_outside_their_range_are_refused(signed_in, plan, field, value, message):
    from sourcing.quote import quote_settings_get

    before = quote_settings_get(plan=plan)
    response = signed_in.post(reverse("sourcing:quote", args=[plan.pk]), _terms(**{field: value}))
    assert response.status_code == 400
    assert message in response.content.decode().replace("&#x27;", "'")
    after = quote_settings_get(plan=plan)
    saved = ("markup_pct", "validity_days", "payment_due_days", "payment_milestones")
    assert [getattr(after, f) for f in saved] == [getattr(before, f) for f in saved]
    assert after.category_markups == before.category_markups


def test_the_models_refuse_the_same_values(plan):
    """What the page refuses, model validation refuses too (the API and imports use it)."""
    from sourcing.models import QuoteFee
    from sourcing.quote import quote_settings_get

    fee = QuoteFee(plan=plan, kind="design", description="D", quantity=D(0), unit="days",
                   unit_price=D(-5))  # fmt: skip
    with pytest.raises(ValidationError) as refused:
        fee.full_clean()
    assert FEE_QUANTITY in refused.value.message_dict["quantity"][0]
    assert FEE_PRICE in refused.value.message_dict["unit_price"][0]

    settings = quote_settings_get(plan=plan)
    settings.validity_days, settings.payment_due_days, settings.markup_pct = 5000, 400, D(-1)
    with pytest.raises(ValidationError) as refused:
        settings.full_clean()
    errors = refused.value.message_dict
    assert errors["validity_days"] == [VALIDITY]
    assert DUE in errors["payment_due_days"][0] and MARKUP in errors["markup_pct"][0]

    settings = quote_settings_get(plan=plan)
    settings.payment_milestones = [{"pct": "60", "when": "on order"},
                                   {"pct": "50", "when": "on delivery"}]  # fmt: skip
    with pytest.raises(ValidationError) as refused:
        settings.clean()
    assert "add up to 110 %" in refused.value.message_dict["payment_milestones"][0]

    settings.payment_milestones = [{"pct": "100", "when": "on delivery"}]
    settings.line_markups = {"rack-42u": "-5"}
    with pytest.raises(ValidationError) as refused:
        settings.clean()
    assert "markups in %, from 0 to 1000" in refused.value.message_dict["line_markups"][0]
