"""The demo plan's TCO page, client share page, plan report and quote agree on every headline
figure, in the plan's currency: the chosen option's NPV, cost per request and per million
tokens, break-even, and the deployment's servers and accelerators."""

from decimal import Decimal

from django.urls import reverse

from planner.facility.deployment import plan_deployment
from planner.pdf.context import headline_option, quote_context, report_context
from planner.sharing import services
from planner.sharing.models import PlanRevision


def _fresh_revision(plan, consultant) -> PlanRevision:
    try:
        return services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    except services.NothingToPublish:
        return PlanRevision.objects.filter(plan=plan).order_by("-number").first()


def test_demo_headline_figures_agree_in_the_plan_currency(client, signed_in, plan, consultant):
    revision = _fresh_revision(plan, consultant)
    snap = revision.snapshot
    tco, placement = snap["tco"], snap["placement"]
    assert plan.currency == "EUR" and tco["currency"] == "EUR"
    assert tco["fx"]["from"] == "USD" and tco["fx"]["to"] == "EUR" and tco["fx"]["date"]
    chosen = headline_option(tco, placement).model_dump(mode="json")
    assert chosen is not None

    # TCO page (the consultant's): the same run, the same option, the same figures.
    page = signed_in.get(reverse("facility:tco", args=[plan.pk]))
    assert page.status_code == 200
    results = page.context["run"].results
    assert results["currency"] == "EUR" and results["fx"]["rate"] == tco["fx"]["rate"]
    on_page = next(o for o in results["options"] if o["key"] == chosen["key"])
    for key in ("npv_amount", "cost_per_request_amount", "cost_per_million_output_tokens_amount",
                "break_even_month", "owned_gpus"):  # fmt: skip
        assert str(on_page[key]) == str(chosen[key]), key
    # each workload's own cost per request, the same on the page as in the revision
    assert on_page["workloads"] and len(on_page["workloads"]) == len(snap["workloads"])
    for mine, theirs in zip(on_page["workloads"], chosen["workloads"], strict=True):
        assert str(mine["cost_per_request_amount"]) == str(theirs["cost_per_request_amount"])
    text = page.content.decode()
    assert f"1 USD = {tco['fx']['rate']} EUR (rate of {tco['fx']['date']})" in text
    assert f"{Decimal(chosen['npv_amount']):,.0f}".replace(",", "") in text.replace(
        ",", ""
    ).replace("\u00a0", "")

    # Report (PDF context): the executive summary heads with the chosen option, in EUR.
    head = {"revision_number": revision.number, "published_at": revision.published_at,
            "published_by": "consultant"}  # fmt: skip
    report = report_context(snap, **head)
    assert report.summary["headline_label"] == chosen["label"]
    assert report.summary["currency"] == "EUR"
    assert [str(w["cost_per_request_amount"]) for w in report.summary["per_workload"]] == [
        str(w["cost_per_request_amount"]) for w in chosen["workloads"]
    ]
    assert str(report.summary["cost_per_million_amount"]) == str(
        chosen["cost_per_million_output_tokens_amount"]
    )
    assert report.summary["fx"]["rate"] == tco["fx"]["rate"]

    # Client share page: the same figures, printed in EUR, the rate shown once.
    link = services.share_link_create(
        plan=plan, user=consultant, revision=revision, expires_at=None, note=""
    )
    public = client.get(reverse("sharing:public", args=[link.token])).content.decode()
    headline = public.split("<dt>Cost per request</dt>", 1)[1].split("</dd>", 1)[0]
    for w in chosen["workloads"]:
        assert f"{w['name']} " in headline
        # From the figure's text, as the page does (Decimal of the float 0.002375 is a hair
        # under it and formats as 0.00237).
        assert f"{Decimal(str(w['cost_per_request_amount'])):,.5f} EUR" in headline
    assert f"{Decimal(chosen['npv_amount']):,.0f} EUR" in public
    assert public.count(f"1 USD = {tco['fx']['rate']} EUR") == 1
    assert " USD</td>" not in public  # no TCO amount left in USD

    # Servers and accelerators: the deployment, the TCO's owned option, the quote's servers.
    deployment = plan_deployment(plan=plan)
    owned = next(o for o in tco["options"] if o["key"] == "owned")
    assert owned["owned_gpus"] == deployment.accelerators_installed
    assert sum(part["servers"] for part in owned["sites"]) == deployment.servers
    quote = quote_context(snap, **head)
    categories = [line["category"] for line in snap["bom"]["lines"]]
    quoted_servers = sum(
        line.quantity for line, category in zip(quote.lines, categories, strict=False)
        if category == "server"
    )  # fmt: skip
    assert quoted_servers == deployment.servers
    assert quote.head.currency == "EUR"
