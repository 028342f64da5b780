"""One set of commercial terms per quote: the payment milestones, delivery, warranty and
validity are entered once (the plan's quote page) and every page of the quote prints them from
there; no other payment schedule can appear (the quote PDF once said "30 % on order, 70 % on
delivery" on one page and "40 / 50 / 10 %" in its Terms)."""

import re
from decimal import Decimal

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from planner.money import format_money
from planner.sharing import services
from tests.sharing.conftest import pdf_text

D = Decimal
# Not the default (40 / 50 / 10): a schedule printed from anywhere else would show beside it.
MILESTONES = "25 % on order\n60 % on delivery\n15 % on acceptance after burn-in"
SCHEDULE = {("25", "on order"), ("60", "on delivery"), ("15", "on acceptance")}
# Any percentage that falls due on an event, as a payment schedule states it.
STATED = re.compile(r"(\d+(?:\.\d+)?)\s*%\s*(on order|on delivery|on acceptance|upon \w+|at \w+)")


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _schedules(text: str) -> set[tuple[str, str]]:
    return set(STATED.findall(_flat(text)))


def _form(**changes) -> dict[str, str]:
    data = {
        "markup_pct": "0", "payment_milestones": MILESTONES, "payment_due_days": "45",
        "delivery_terms": "Delivered to Frankfurt, duties paid (DDP).",
        "warranty_terms": "36 months from acceptance, parts and labour.",
        "validity_days": "21",
    }  # fmt: skip
    return data | changes


@pytest.fixture
def published(signed_in, plan, consultant):
    saved = signed_in.post(reverse("sourcing:quote", args=[plan.pk]), _form())
    assert saved.status_code == 302
    # the demo publishes with its open items (its sites' failing power checks)
    return services.revision_publish(plan=plan, user=consultant, note="terms", with_open_items=True)


def test_every_page_of_the_quote_prints_the_one_schedule(signed_in, plan, published):
    from planner.sharing.body import BODY_TEMPLATE, revision_view_context

    sell = published.snapshot["quote"]["sell"]
    total = D(sell["total_sell"])
    assert sell["unpriced_lines"] == 0
    # Amounts by hand: 25 % and 60 % of the total rounded to cents; the last takes the rest.
    first = (total * D("0.25")).quantize(D("0.01"))
    second = (total * D("0.60")).quantize(D("0.01"))
    last = total - first - second

    pdf = _flat(pdf_text(services.document_render(revision=published, kind="quote"))[0])
    share = _flat(render_to_string(BODY_TEMPLATE, revision_view_context(published)))
    page = _flat(signed_in.get(reverse("sourcing:quote", args=[plan.pk])).content.decode())
    for text in (pdf, share, page):
        assert _schedules(text) == SCHEDULE  # the one schedule, and no other
        assert f"25 % on order ({format_money(first, 'EUR')})" in text
        assert f"60 % on delivery ({format_money(second, 'EUR')})" in text
        assert format_money(last, "EUR") in text
        assert "Invoices payable within 45 days" in text
        assert "36 months from acceptance, parts and labour." in text
        assert "Delivered to Frankfurt, duties paid (DDP)." in text
    # Validity: the quote's own 21 days (the organisation's days only start a new quote).
    assert published.snapshot["quote"]["valid_until"] in pdf
    assert "40 %" not in pdf and "30 % on order" not in pdf


def test_the_organisation_terms_print_no_schedule_of_their_own(published, plan):
    # The general terms the organisation prints on every quote state no payment.
    terms = published.snapshot["quote"]["terms"]
    assert terms and not any(STATED.search(t) or "Payment" in t for t in terms)


def test_milestones_that_do_not_add_up_to_100_are_refused_next_to_the_field(signed_in, plan):
    from sourcing.quote import quote_settings_get

    url = reverse("sourcing:quote", args=[plan.pk])
    short = signed_in.post(url, _form(payment_milestones="30 % on order\n60 % on delivery"))
    text = short.content.decode()
    assert short.status_code == 400
    assert "The payment milestones add up to 90 %; they must add up to 100 %." in text
    typed = signed_in.post(url, _form(payment_milestones="Net 45"))
    assert typed.status_code == 400
    assert "start each milestone with its percentage" in typed.content.decode()
    stored = quote_settings_get(plan=plan).payment_milestones
    assert [m["pct"] for m in stored] == ["40", "50", "10"]  # the default, unchanged
