"""The revision snapshot's schema: validated on publish, versioned, and read typed by the share
page, the PDFs and the comparison; revisions stored under versions 1 and 2 still load."""

import copy
import json
import re

import pytest

from planner.pdf import context as pdf_context
from planner.sharing import schema, services
from planner.sharing.compare import compare
from planner.sharing.models import SNAPSHOT_SCHEMA_VERSION, PlanRevision

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(plan):
    return PlanRevision.objects.get(plan=plan, number=1).snapshot


def _as_version_2(snapshot: dict) -> dict:
    """The same revision as version 2 stored it: the TCO section's amounts (in its currency)
    under ``…_usd`` names, written out here by hand rather than from the upgrade's table."""
    old = copy.deepcopy(snapshot)
    old["schema_version"] = 2
    text = json.dumps(old["tco"])
    text = re.sub(r'"(\w+?)_amount_per_million_tokens"', r'"\1_usd_per_million_tokens"', text)
    text = re.sub(r'"(\w+?)_amount"', r'"\1_usd"', text)
    old["tco"] = json.loads(text)
    return old


def _as_version_1(snapshot: dict) -> dict:
    """The same revision as version 1 stored it (no open items)."""
    old = _as_version_2(snapshot)
    old["schema_version"] = 1
    old.pop("open_items", None)
    return old


def test_a_published_snapshot_is_of_the_current_version_and_reads_typed(stored, plan):
    assert stored["schema_version"] == SNAPSHOT_SCHEMA_VERSION == 3
    snap = schema.load(stored)
    assert snap.plan.name == plan.name
    chat = next(w for w in snap.workloads if w.name == "Customer chat assistant")
    assert chat.chosen.replicas == plan.workloads.get(name=chat.name).chosen_replicas
    assert snap.bom.available and snap.bom.total_net.currency == plan.currency
    assert snap.tco.cheapest_option is not None
    # The demo fails its A/B feed check at both sites: published with those open items.
    assert {i.kind for i in snap.open_items} == {"facility_check"}


def test_a_version_1_revision_still_loads_and_renders(stored):
    old = _as_version_1(stored)
    snap = schema.load(old)
    assert snap.schema_version == 3 and snap.open_items == []
    head = {"revision_number": 1, "published_at": None, "published_by": ""}
    assert pdf_context.report_context(old, **head).summary == (
        pdf_context.report_context(stored, **head).summary
    )
    assert pdf_context.quote_context(old, **head).total == (
        pdf_context.quote_context(stored, **head).total
    )
    assert pdf_context.cost_sheet_context(old, **head).total_net == (
        pdf_context.cost_sheet_context(stored, **head).total_net
    )
    # Comparing an old revision with a new one reads both typed.
    # (version 1 had no open items: the demo's, its failing A/B feed check, are the only change)
    assert [c for c in compare(old, stored).changes if c.area != "Open items"] == []


def test_a_version_2_revision_reads_its_tco_amounts_under_their_new_names(stored):
    old = _as_version_2(stored)
    cheapest = next(o for o in old["tco"]["options"] if o["key"] == old["tco"]["cheapest"])
    assert "npv_usd" in cheapest and "npv_amount" not in cheapest  # the old shape, really
    assert "low_value_usd" in old["tco"]["tornado"][0]
    assert "owned_p50_usd" in old["tco"]["monte_carlo"]
    snap = schema.load(old)
    assert snap.schema_version == 3
    assert snap.tco.currency == stored["tco"]["currency"] == "EUR"
    # The demo's figures, read from the old keys: the same amounts, in the plan's EUR.
    assert snap.tco.cheapest_option.npv_amount == pytest.approx(
        schema.load(stored).tco.cheapest_option.npv_amount
    )
    assert str(snap.tco.cheapest_option.npv_amount) == cheapest["npv_usd"]
    chat = snap.tco.cheapest_option.workloads[0]
    assert chat.cost_per_request_amount == float(cheapest["workloads"][0]["cost_per_request_usd"])
    dumped = json.dumps(snap.model_dump(mode="json"))
    assert not re.search(r'"\w*_usd\w*":', dumped.replace("cost_per_request_target_usd", ""))
    # Every document and the comparison read it as they read the current version.
    head = {"revision_number": 1, "published_at": None, "published_by": ""}
    assert pdf_context.report_context(old, **head).summary == (
        pdf_context.report_context(stored, **head).summary
    )
    assert pdf_context.report_charts(old).keys() == pdf_context.report_charts(stored).keys()
    assert compare(old, stored).changes == []


def test_an_old_unavailable_section_with_exception_text_still_loads(stored):
    old = _as_version_1(stored)
    old["bom"] = {"available": False, "reason": "The bill of materials could not be priced: x"}
    snap = schema.load(old)
    assert snap.bom.available is False and snap.bom.lines == []
    quote = pdf_context.quote_context(old, revision_number=1, published_at=None, published_by="")
    assert not quote.available and quote.lines == ()


def test_an_unknown_version_or_a_wrong_field_is_refused(stored):
    with pytest.raises(schema.SnapshotInvalid, match="version 99"):
        schema.load({**stored, "schema_version": 99})
    broken = copy.deepcopy(stored)
    broken["workloads"][0]["chosen"]["replicas"] = "many"
    with pytest.raises(schema.SnapshotInvalid, match=r"workloads\.0\.chosen\.replicas"):
        schema.load(broken)
    with pytest.raises(schema.SnapshotInvalid, match="must be of version 3"):
        schema.validate(_as_version_1(stored))


def test_publish_validates_and_stores_nothing_when_the_snapshot_is_invalid(
    plan, consultant, monkeypatch
):
    real = services.plan_snapshot

    def wrong(**kwargs):
        snapshot = real(**kwargs)
        snapshot["timeline"]["go_live"] = "next spring"
        return snapshot

    monkeypatch.setattr(services, "plan_snapshot", wrong)
    plan.notes = "A change to publish."
    plan.save()
    with pytest.raises(services.PublishFailed, match=r"timeline\.go_live"):
        services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    assert PlanRevision.objects.filter(plan=plan).count() == 1
