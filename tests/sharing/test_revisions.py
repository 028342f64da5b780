"""Publishing freezes a revision: numbered per plan, immutable, and its PDFs never change."""

import hashlib
import html

import pytest
from django.urls import reverse

from planner.sharing import services
from planner.sharing.models import (
    Decision,
    DocumentKind,
    ImmutableRecordError,
    PlanRevision,
    ShareLinkView,
)
from tests.sharing.conftest import pdf_text


def test_the_demo_has_a_published_revision_link_comment_approval_and_sign_offs(plan):
    revision = PlanRevision.objects.get(plan=plan)
    assert revision.number == 1 and revision.published_by_name == "Dana Demo"
    assert revision.snapshot["schema_version"] == 3
    assert plan.share_links.count() == 1
    assert revision.comments.count() == 1
    assert revision.decisions.get().kind == "approved"
    assert set(revision.snapshot["sign_offs"]) == {"autoscaling", "monitoring_spares_support"}
    for section in ("workloads", "sites", "placement", "tco", "bom", "timeline", "checklist"):
        assert revision.snapshot[section], section
    assert revision.snapshot["bom"]["available"] and revision.snapshot["tco"]["available"]
    assert revision.snapshot["workloads"][0]["chosen"]["summary"]


def test_publishing_numbers_revisions_per_plan_and_records_who(plan, consultant):
    plan.notes = "Reviewed with the client."
    plan.save()
    second = services.revision_publish(
        plan=plan, user=consultant, note="After review", with_open_items=True
    )
    assert second.number == 2
    assert second.published_by == consultant
    assert second.snapshot["quote"]["number"].endswith("-R2")
    assert len(second.snapshot_sha256) == 64


def test_a_published_revision_cannot_be_updated(plan):
    revision = PlanRevision.objects.get(plan=plan)
    revision.note = "rewritten"
    with pytest.raises(ImmutableRecordError):
        revision.save()
    with pytest.raises(ImmutableRecordError):
        PlanRevision.objects.filter(pk=revision.pk).update(note="rewritten")
    with pytest.raises(ImmutableRecordError):
        PlanRevision.objects.filter(pk=revision.pk).update(snapshot={})
    revision.refresh_from_db()
    assert revision.note != "rewritten" and revision.snapshot["plan"]["name"] == plan.name


def test_decisions_and_view_logs_are_append_only(plan):
    decision = Decision.objects.get(revision__plan=plan)
    decision.kind = "changes_requested"
    with pytest.raises(ImmutableRecordError):
        decision.save()
    with pytest.raises(ImmutableRecordError):
        Decision.objects.filter(pk=decision.pk).update(kind="changes_requested")
    with pytest.raises(ImmutableRecordError):
        ShareLinkView.objects.all().update(ip_address="10.0.0.1")


def test_edits_after_publishing_change_neither_the_revision_nor_its_pdfs(plan, consultant):
    from sourcing.models import BomLine

    revision = PlanRevision.objects.get(plan=plan)
    frozen = revision.snapshot
    quote = services.document_get_or_render(revision=revision, kind=DocumentKind.QUOTE)
    checklist_pdf = services.document_get_or_render(revision=revision, kind=DocumentKind.CHECKLIST)
    quote_bytes = services.document_bytes(quote)
    quote_text, _, _ = pdf_text(quote_bytes)
    old_line = BomLine.objects.filter(plan=plan, quantity__gt=0).order_by("position").first()

    # The consultant keeps working on the plan.
    plan.name = "Renamed after publishing"
    plan.save()
    workload = plan.workloads.first()
    workload.peak_concurrency = 900
    workload.save()
    old_line.description = "Edited line after publishing"
    old_line.save()

    revision = PlanRevision.objects.get(pk=revision.pk)
    assert revision.snapshot == frozen
    again = services.document_get_or_render(revision=revision, kind=DocumentKind.QUOTE)
    assert again.pk == quote.pk and services.document_bytes(again) == quote_bytes
    assert hashlib.sha256(quote_bytes).hexdigest() == again.sha256
    assert (
        services.document_get_or_render(revision=revision, kind=DocumentKind.CHECKLIST).sha256
        == checklist_pdf.sha256
    )
    # Rendering the revision afresh still shows the published plan, not the live one.
    fresh_text, _, _ = pdf_text(services.document_render(revision=revision, kind="quote"))
    assert fresh_text == quote_text
    assert "Renamed after publishing" not in fresh_text
    assert "Edited line after publishing" not in fresh_text
    # The next revision does show the edits (the peak was saved past sizing's re-plan, so the
    # stored results are open items).
    second = services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    assert second.snapshot["plan"]["name"] == "Renamed after publishing"
    assert second.snapshot["workloads"][0]["peak_concurrency"] == 900


def test_compare_shows_what_changed_and_its_impact(signed_in, plan, consultant):
    workload = plan.workloads.first()
    workload.peak_concurrency = 800
    workload.save()
    services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    response = signed_in.get(reverse("sharing:compare", args=[plan.pk]) + "?a=1&b=2")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Peak concurrency" in body and "400" in body and "800" in body
    comparison = response.context["comparison"]
    assert {i.label for i in comparison.impacts} >= {
        "Go-live", "Servers", "Accelerators installed", "IT load, kW", "Racks"
    }  # fmt: skip
    bad = signed_in.get(reverse("sharing:compare", args=[plan.pk]) + "?a=9&b=x")
    assert bad.status_code == 400 and "There is no revision 9" in bad.content.decode()


def _impact(comparison, label: str):
    return next(i for i in comparison.impacts if i.label == label)


def test_an_unchanged_deployment_compares_as_the_pooled_servers_with_no_change(plan, consultant):
    from planner.sharing.compare import compare

    first = PlanRevision.objects.get(plan=plan, number=1)
    plan.notes = "Reviewed with the client."
    plan.save()
    second = services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    pooled = first.snapshot["deployment"]
    assert pooled["available"] and second.snapshot["deployment"] == pooled

    comparison = compare(first.snapshot, second.snapshot)

    # The pooled deployment's figures, not the chosen configurations' servers summed.
    per_workload = sum(w["chosen"]["servers"] for w in first.snapshot["workloads"])
    assert per_workload != pooled["servers"]  # the demo pools: the sum would mislead
    for label, key, text in (
        ("Servers", "servers", str),
        ("Accelerators installed", "accelerators_installed", str),
        ("Accelerators used at peak", "accelerators_used", str),
        ("Racks", "racks", str),
        ("IT load, kW", "it_load_kw", lambda kw: f"{kw:.1f}"),
    ):
        impact = _impact(comparison, label)
        assert (impact.before, impact.after) == (text(pooled[key]),) * 2, label
        assert impact.direction == "same" and impact.delta in ("+0", "+0.0"), label
    assert "Replicas" not in {i.label for i in comparison.impacts}


def test_a_pooled_change_compares_as_the_deployments_servers(signed_in, plan, consultant):
    from planner import sizing
    from planner.sharing.compare import compare

    chat = plan.workloads.get(name="Customer chat assistant")
    chat.peak_concurrency *= 3
    sizing.chosen_replan(chat)
    chat.save()
    second = services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    first = PlanRevision.objects.get(plan=plan, number=1)
    before, after = first.snapshot["deployment"], second.snapshot["deployment"]
    assert after["servers"] > before["servers"]

    servers = _impact(compare(first.snapshot, second.snapshot), "Servers")

    assert (servers.before, servers.after) == (str(before["servers"]), str(after["servers"]))
    assert servers.delta == f"+{after['servers'] - before['servers']}"
    assert servers.direction == "up"
    body = signed_in.get(reverse("sharing:compare", args=[plan.pk]) + "?a=1&b=2").content
    assert f'<td>Servers</td><td class="num">{before["servers"]}</td>' in body.decode()


def test_an_older_revision_without_a_deployment_compares_as_not_recorded(plan):
    from planner.sharing.compare import compare

    stored = PlanRevision.objects.get(plan=plan, number=1).snapshot
    old = {k: v for k, v in stored.items() if k != "deployment"}

    servers = _impact(compare(old, stored), "Servers")

    assert (servers.before, servers.after) == ("—", str(stored["deployment"]["servers"]))
    assert servers.delta == "—" and servers.direction == "same"


def test_each_workloads_need_is_labelled_as_pooled_into_the_deployment(signed_in, plan):
    """Beside the pooled total, a workload's own accelerators never read as the deployment."""
    revision = PlanRevision.objects.get(plan=plan, number=1)
    servers = revision.snapshot["deployment"]["servers"]
    pooled = f"pooled into the deployment's {servers} servers"
    overview = signed_in.get(reverse("plan_detail", args=[plan.pk])).content.decode()
    share = signed_in.get(reverse("sharing:revision", args=[plan.pk, 1])).content.decode()
    report = services.document_get_or_render(revision=revision, kind=DocumentKind.REPORT)
    report_text, _, _ = pdf_text(services.document_bytes(report))
    for where, text in (("overview", overview), ("share page", share), ("report", report_text)):
        flat = " ".join(html.unescape(text).split())
        assert "needs " in flat and pooled in flat, where
    chat = next(w for w in revision.snapshot["workloads"] if w["chosen"]["servers"] != servers)
    own = f"{chat['chosen']['servers']} server"
    assert f"replicas, {own}" not in " ".join(
        html.unescape(share).split()
    )  # no per-workload server count
