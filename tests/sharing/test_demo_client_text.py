"""The demo's client-facing text names only what the plan holds: every place it names is one of
the plan's sites (or a city its users are in), the spares it mentions are in the BOM at the sites
it says, and the support term is the offer's. The demo once told the client its spares were "in
the Amsterdam cage", a site the plan does not have."""

import re

import pytest

from planner.engine.network import REGIONS
from planner.models import OperationsPlan
from planner.sharing.body import revision_body_render
from planner.sharing.models import ChecklistSignOff, PlanRevision
from sourcing.models import BomLine, Offer

pytestmark = pytest.mark.django_db

# "<Name> cage", "the <Name> site" …: a named place of the plan's own hardware.
PLACE = re.compile(
    r"\b([A-Z][A-Za-z-]+) (?:cage|suite|hall|colocation|data cent(?:re|er)|warehouse|site)\b"
)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Z][A-Za-z0-9-]+", text))


def _client_texts(plan) -> dict[str, str]:
    """Every text the demo wrote for the client, and the client's page as published."""
    revision = PlanRevision.objects.filter(plan=plan).latest("number")
    operations = OperationsPlan.objects.get(plan=plan)
    texts = {
        "plan notes": plan.notes,
        "placement reason": plan.placement_decision.reason,
        "client page": re.sub(r"<[^>]+>", " ", revision_body_render(revision)[0]),
    }
    for field in operations._meta.get_fields():
        if field.name.endswith("_how"):
            texts[f"operations {field.name}"] = getattr(operations, field.name)
    for sign_off in ChecklistSignOff.objects.filter(plan=plan):
        texts[f"sign-off {sign_off.item_key}"] = sign_off.note
    return texts


def test_the_demo_names_only_places_the_plan_holds(demo):
    plan, _, _ = demo
    sites = list(plan.sites.all())
    site_words = set().union(*(_words(s.name) for s in sites))
    user_regions = set().union(*((w.region_shares or {}).keys() for w in plan.workloads.all()))
    site_regions = {s.region_key for s in sites}
    allowed = site_words | set().union(
        *(_words(REGIONS[key].city) for key in user_regions | site_regions if key in REGIONS)
    )
    known_cities = set().union(*(_words(r.city) for r in REGIONS.values())) | {"Amsterdam"}
    for name, text in _client_texts(plan).items():
        named = {m.group(1) for m in PLACE.finditer(text)} - {"Colocation", "The", "A"}
        assert named <= site_words, f"{name} names a place the plan has no site at: {named}"
        cities = _words(text) & known_cities
        assert cities <= allowed, f"{name} names a city the plan does not hold: {cities}"


def test_the_spares_and_support_text_is_the_boms(demo):
    plan, _, _ = demo
    how = OperationsPlan.objects.get(plan=plan)
    spare_sites = {
        line.site.name
        for line in BomLine.objects.filter(plan=plan, category="spares", site__isnull=False)
    }
    assert spare_sites  # the demo's BOM holds spares, per site
    for site in plan.sites.all():
        assert (site.name in how.replacement_parts_how) == (site.name in spare_sites)
    (term,) = {
        o.term_years
        for o in Offer.objects.filter(supplier__organisation=plan.organisation, service="support")
    }
    assert f"{term}-year hardware support contract" in how.support_how
    note = ChecklistSignOff.objects.get(plan=plan, item_key="monitoring_spares_support").note
    assert how.replacement_parts_how in note and how.support_how in note
