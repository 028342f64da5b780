"""The plan currency: only codes the planner can convert; no page fails on an old bad code;
no quote is published at 0.00 for a missing exchange rate."""

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from planner.models import Client, Plan


@pytest.fixture
def eur_rate(db):
    from sourcing.models import FxRate

    return FxRate.objects.create(
        from_currency="EUR", to_currency="USD", rate=Decimal("1.08"), as_of=date(2026, 1, 2)
    )


def _post_plan(client, **values):
    data = {"name": "Support bot", "new_client": "Acme GmbH", **values}
    return client.post(reverse("plan_create"), data)


def test_banana_is_a_field_error_and_nothing_is_saved(client, consultant_a, eur_rate):
    client.force_login(consultant_a)

    response = _post_plan(client, currency="banana")

    page = response.content.decode()
    assert response.status_code == 400
    assert "Unknown currency &#x27;BANANA&#x27;" in page
    assert 'value="banana"' in page  # what was typed is kept, not cut to "ban"
    assert 'maxlength="3"' not in page
    assert not Plan.objects.exists()


def test_ban_cut_by_a_browser_is_refused_too(client, consultant_a, eur_rate):
    client.force_login(consultant_a)

    response = _post_plan(client, currency="ban")

    assert response.status_code == 400
    assert "Unknown currency &#x27;BAN&#x27;" in response.content.decode()


def test_a_known_currency_without_any_rate_is_refused(client, consultant_a, eur_rate):
    client.force_login(consultant_a)

    response = _post_plan(client, currency="JPY")

    assert response.status_code == 400
    assert "No exchange rate is stored for JPY" in response.content.decode()
    assert not Plan.objects.exists()


@pytest.mark.parametrize("typed, saved", [("eur", "EUR"), ("USD", "USD"), (" usd ", "USD")])
def test_convertible_currencies_are_saved(client, consultant_a, eur_rate, typed, saved):
    client.force_login(consultant_a)

    response = _post_plan(client, currency=typed)

    assert response.status_code == 302
    assert Plan.objects.get().currency == saved


def test_usd_needs_no_rate(db):
    from sourcing.selectors import convertible_currencies, currency_problem

    assert convertible_currencies() == {"USD"}
    assert currency_problem("USD") == ""
    assert "No exchange rate" in currency_problem("EUR")


@pytest.mark.parametrize("code", ["BAN", "JPY"])
@pytest.mark.parametrize("page", ["sourcing:landed_cost", "sourcing:timeline"])
def test_pages_answer_for_a_stored_bad_or_rateless_currency(client, sourced_plan, consultant_a,
                                                            code, page):  # fmt: skip
    Plan.objects.filter(pk=sourced_plan.pk).update(currency=code)  # as saved before validation
    client.force_login(consultant_a)

    response = client.get(reverse(page, args=[sourced_plan.pk]))

    assert response.status_code == 200
    text = response.content.decode()
    if page == "sourcing:landed_cost":
        assert "not priced" in text
        if code == "BAN":
            assert "plan currency &#x27;BAN&#x27; unknown" in text
        else:
            assert "No FX rate from EUR to JPY" in text


def test_missing_rates_are_listed_once_per_pair(sourced_plan):
    from sourcing.selectors import missing_fx_rates

    assert missing_fx_rates(plan=sourced_plan, organisation=sourced_plan.organisation) == []
    Plan.objects.filter(pk=sourced_plan.pk).update(currency="JPY")
    sourced_plan.refresh_from_db()

    missing = missing_fx_rates(plan=sourced_plan, organisation=sourced_plan.organisation)

    # The offers are in EUR and USD; the order date is 2026-08-03.
    assert missing == ["EUR → JPY on or before 2026-08-03", "USD → JPY on or before 2026-08-03"]


def test_publishing_without_a_rate_says_which_and_publishes_nothing(sourced_plan, consultant_a):
    from planner.sharing import services
    from planner.sharing.models import PlanRevision

    Plan.objects.filter(pk=sourced_plan.pk).update(currency="GBP")
    sourced_plan.refresh_from_db()

    with pytest.raises(services.SharingError) as refused:
        services.revision_publish(
            plan=sourced_plan, user=consultant_a, with_open_items=True
        )  # only the FX check is under test here: the fixture plan is not costed

    assert "no exchange rate for EUR → GBP on or before 2026-08-03" in str(refused.value)
    assert "USD → GBP" in str(refused.value)
    assert not PlanRevision.objects.exists()


def test_publish_page_shows_the_missing_rate(client, sourced_plan, consultant_a):
    Plan.objects.filter(pk=sourced_plan.pk).update(currency="GBP")
    client.force_login(consultant_a)

    response = client.post(reverse("sharing:publish", args=[sourced_plan.pk]), {"note": ""})

    assert response.status_code == 400
    assert "no exchange rate for EUR → GBP" in response.content.decode()


def test_publishing_with_every_rate_works(sourced_plan, consultant_a):
    from planner.sharing import services

    revision = services.revision_publish(
        plan=sourced_plan, user=consultant_a, with_open_items=True
    )  # only the FX check is under test here: the fixture plan is not costed

    assert revision.number == 1


def test_old_plan_rows_keep_working_in_the_model(org_a):
    client = Client.objects.create(organisation=org_a, name="Old")
    plan = Plan.objects.create(organisation=org_a, client=client, name="Old", currency="USD")
    assert plan.currency == "USD"


def test_a_jpy_plan_prints_whole_yen_alike_on_the_page_and_the_quote(client, sourced_plan,
                                                                   consultant_a):  # fmt: skip
    """One style everywhere: "1,234,568 JPY" on the landed-cost page and in the quote."""
    import re

    from django.template.loader import render_to_string

    from planner.money import format_money
    from planner.sharing import services
    from sourcing.models import FxRate
    from sourcing.services import landed_cost_report

    for src, rate in (("EUR", "161.37"), ("USD", "148.45")):
        FxRate.objects.create(
            from_currency=src, to_currency="JPY", rate=Decimal(rate), as_of=date(2026, 7, 31)
        )
    Plan.objects.filter(pk=sourced_plan.pk).update(currency="JPY")
    sourced_plan.refresh_from_db()
    report = landed_cost_report(plan=sourced_plan, organisation=sourced_plan.organisation)
    total = format_money(report.total_net.amount, "JPY")
    assert re.fullmatch(r"\d{1,3}(,\d{3})+ JPY", total)
    client.force_login(consultant_a)

    page = client.get(reverse("sourcing:landed_cost", args=[sourced_plan.pk])).content.decode()
    revision = services.revision_publish(
        plan=sourced_plan, user=consultant_a, with_open_items=True
    )  # only the FX check is under test here: the fixture plan is not costed
    doc = services.document_context(revision=revision, kind="quote")
    quote = render_to_string("pdf/quote.html", {"doc": doc})

    sold = next(x for x in revision.snapshot["quote"]["sell"]["lines"] if x["unit_sell"])
    unit = format_money(Decimal(sold["unit_sell"]), "JPY")
    assert re.fullmatch(r"\d{1,3}(,\d{3})* JPY", unit)
    assert total in page and unit in quote
    for text in (page, quote):
        assert not re.search(r"\d\.\d\d JPY", text)  # never cents of a yen
