"""Every edit form of the demo plan, loaded and submitted unchanged, changes nothing.

The form's values are read from the page as a browser would send them (hidden inputs
included), posted back as they are, and every stored row of the organisation's plan data is
compared before and after. This caught date inputs rendered as 01/06/2027, which
``<input type=date>`` shows as empty, so an unchanged save erased the date.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.html_forms import HtmlForm, post_forms

# Written on every save by design, not data a user typed: auto_now timestamps, and the
# optimistic-locking counter the concurrency work adds.
IGNORED_FIELDS = {"updated_at", "version"}
# Rows that a save replaces wholesale (same content, new primary key).
REPLACED_ROWS = {"PowerUpgrade", "OfferPriceBreak"}


def _rows(model, queryset) -> list:
    names = [
        f.attname
        for f in model._meta.concrete_fields
        if f.name not in IGNORED_FIELDS and not (model.__name__ in REPLACED_ROWS and f.primary_key)
    ]
    rows = [tuple((n, getattr(obj, n)) for n in names) for obj in queryset]
    return sorted(rows, key=repr)


def snapshot(plan) -> dict[str, list]:
    """Every stored row an edit form of the plan could touch."""
    from planner.facility.models import (
        PlacementDecision,
        PowerUpgrade,
        ResidencyRule,
        Site,
        TcoSettings,
    )
    from planner.models import Client, Membership, Organisation, Plan, Workload
    from sourcing.models import (
        BomLine,
        FxRate,
        Offer,
        OfferPriceBreak,
        PlanEvent,
        PurchaseOrder,
        PurchaseOrderLine,
        SourcingSettings,
        Supplier,
    )

    org = plan.organisation
    querysets = {
        Organisation: Organisation.objects.filter(pk=org.pk),
        Membership: Membership.objects.filter(organisation=org),
        Client: Client.objects.filter(organisation=org),
        Plan: Plan.objects.filter(organisation=org),
        Workload: Workload.objects.filter(plan=plan),
        Site: Site.objects.filter(plan=plan),
        PowerUpgrade: PowerUpgrade.objects.filter(site__plan=plan),
        ResidencyRule: ResidencyRule.objects.filter(workload__plan=plan),
        PlacementDecision: PlacementDecision.objects.filter(plan=plan),
        TcoSettings: TcoSettings.objects.filter(plan=plan),
        SourcingSettings: SourcingSettings.objects.filter(plan=plan),
        BomLine: BomLine.objects.filter(plan=plan),
        Supplier: Supplier.objects.filter(organisation=org),
        Offer: Offer.objects.filter(supplier__organisation=org),
        OfferPriceBreak: OfferPriceBreak.objects.filter(offer__supplier__organisation=org),
        FxRate: FxRate.objects.all(),
        PurchaseOrder: PurchaseOrder.objects.filter(plan=plan),
        PurchaseOrderLine: PurchaseOrderLine.objects.filter(order__plan=plan),
        PlanEvent: PlanEvent.objects.filter(plan=plan),
    }
    return {m.__name__: _rows(m, qs) for m, qs in querysets.items()}


def _differences(before: dict, after: dict) -> list[str]:
    """What changed, field by field, in words (rows added or removed are named too)."""
    out = []
    for model in before:
        old_rows, new_rows = before[model], after[model]
        if old_rows == new_rows:
            continue
        if len(old_rows) != len(new_rows):
            out.append(f"{model}: {len(old_rows)} rows became {len(new_rows)}")
            continue
        for old, new in zip(old_rows, new_rows, strict=True):
            fields = [
                f"{a[0]} {a[1]!r} → {b[1]!r}" for a, b in zip(old, new, strict=True) if a != b
            ]
            if fields:
                out.append(f"{model} {dict(old).get('id', '')}: {', '.join(fields)}")
    return out


def _edit_pages(plan) -> list[tuple[str, str, callable]]:
    """(label, page URL, which of its POST forms is the edit form)."""
    from planner.facility.models import Site
    from sourcing.models import BomLine, Offer, PurchaseOrder, Supplier

    def testid(value):
        return lambda f: f.attrs.get("data-testid") == value

    def action_is(url):
        return lambda f: f.attrs.get("action") == url

    def plain(f: HtmlForm):  # the page's own form (no action) that is not a delete/logout
        return not f.attrs.get("action")

    p = plan.pk
    pages = [
        ("plan", reverse("plan_edit", args=[p]), plain),
        ("client", reverse("client_edit", args=[plan.client_id]), plain),
        ("TCO settings", reverse("facility:tco", args=[p]), testid("tco-settings")),
        ("placement settings", reverse("facility:placement", args=[p]), testid("placement-settings")),
        ("placement choice", reverse("facility:placement", args=[p]), testid("choice-form")),
        ("sourcing settings", reverse("sourcing:settings", args=[p]), plain),
        ("FX rates", reverse("sourcing:fx"), testid("fx-form")),
        ("quote terms", reverse("quote_terms"), plain),
    ]  # fmt: skip
    for w in plan.workloads.order_by("pk"):
        url = reverse("workload_sizing", args=[p, w.pk])
        pages.append((f"workload {w.name}", url, lambda f: f.attrs.get("id") == "workload-form"))
    for site in Site.objects.filter(plan=plan).order_by("pk"):
        url = reverse("facility:site_detail", args=[p, site.pk])
        pages.append((f"site {site.name} (with its power upgrades)", url, testid("site-form")))
    bom = reverse("sourcing:bom", args=[p])
    for line in BomLine.objects.filter(plan=plan).order_by("pk"):
        edit = reverse("sourcing:bom_line_edit", args=[p, line.pk])
        pages.append((f"BOM line {line.part_key}", bom, action_is(edit)))
    for supplier in Supplier.objects.filter(organisation=plan.organisation).order_by("pk"):
        url = reverse("sourcing:supplier_detail", args=[supplier.pk])
        pages.append((f"supplier {supplier.name}", url, plain))
    for offer in Offer.objects.filter(supplier__organisation=plan.organisation).order_by("pk"):
        url = reverse("sourcing:offer_edit", args=[offer.pk])
        pages.append((f"offer {offer.pk}", url, testid("offer-form")))
    for order in PurchaseOrder.objects.filter(plan=plan).order_by("pk"):
        url = reverse("sourcing:order_detail", args=[p, order.pk])
        pages.append((f"purchase order {order.reference}", url, testid("order-form")))
    return pages


@pytest.mark.django_db
def test_every_edit_form_round_trips_unchanged(demo, signed_in, capsys):
    plan = demo[0]
    pages = _edit_pages(plan)
    kinds = {label.split(" ")[0] for label, _, _ in pages}
    assert {"plan", "client", "workload", "site", "BOM", "offer", "purchase"} <= kinds
    failures = []
    # The BOM page holds every line's form and takes a second to build: it is read once, as
    # a user editing line after line sends each form from the page they loaded. Its forms
    # still hold the stored rows, since every earlier save changed nothing (or is a failure
    # below); each line's save must be accepted (a redirect), not refused as stale.
    bom_page = None
    for label, url, is_edit_form in pages:
        bom_line = label.startswith("BOM line ")
        page = bom_page if bom_line and bom_page is not None else signed_in.get(url)
        assert page.status_code == 200, (label, url, page.status_code)
        if bom_line:
            bom_page = page
        forms = [f for f in post_forms(page.content.decode()) if is_edit_form(f)]
        assert len(forms) == 1, (label, url, [f.attrs for f in post_forms(page.content.decode())])
        form = forms[0]
        before = snapshot(plan)
        response = signed_in.post(form.attrs.get("action") or url, form.data)
        assert response.status_code < 500, (label, response.status_code)
        if bom_line:
            assert response.status_code == 302, (label, response.status_code)
        after = snapshot(plan)
        changed = _differences(before, after)
        if changed:
            failures.append(f"{label} (answered {response.status_code}): {'; '.join(changed)}")
    with capsys.disabled():
        print(f"\n{len(pages)} edit forms of the demo plan round-tripped unchanged")
    assert not failures, "\n".join(failures)
