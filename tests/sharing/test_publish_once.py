"""Publishing is idempotent: a double submit or unchanged content makes no new revision."""

import threading

import pytest
from django.db import connection
from django.urls import reverse

from planner.models import Plan
from planner.sharing import services
from planner.sharing.models import PlanRevision
from planner.sharing.snapshot import plan_snapshot, snapshot_content_hash


def test_the_content_hash_ignores_the_number_and_dates_only(plan):
    first = plan_snapshot(plan=plan, number=2)
    again = plan_snapshot(plan=plan, number=3)
    assert first["quote"]["number"] != again["quote"]["number"]
    assert snapshot_content_hash(first) == snapshot_content_hash(again)
    plan.notes = "changed"
    plan.save()
    assert snapshot_content_hash(plan_snapshot(plan=plan, number=2)) != snapshot_content_hash(first)


def test_publishing_unchanged_content_makes_no_revision(plan, consultant):
    with pytest.raises(services.NothingToPublish) as caught:
        services.revision_publish(plan=plan, user=consultant, note="again", with_open_items=True)
    assert caught.value.revision.number == 1
    assert "Nothing changed since revision 1" in str(caught.value)
    assert PlanRevision.objects.filter(plan=plan).count() == 1


def test_sixteen_rapid_publishes_make_one_revision(signed_in, plan):
    plan.notes = "Frankfurt suite added."
    plan.save()
    url = reverse("sharing:publish", args=[plan.pk])
    # (the demo fails its A/B feed check: every publish ticks "with these open items")
    data = {"note": "Frankfurt", "with_open_items": "on"}
    answers = [signed_in.post(url, data) for _ in range(16)]

    assert all(a.status_code == 302 for a in answers)
    assert list(PlanRevision.objects.filter(plan=plan).values_list("number", flat=True)) == [2, 1]
    assert {a.url for a in answers} == {reverse("sharing:revision", args=[plan.pk, 2])}
    followed = signed_in.get(answers[-1].url)
    assert "Nothing changed since revision 2" in followed.content.decode()
    # Content that returns to an earlier state is new relative to the latest: it is published.
    plan.notes = ""
    plan.save()
    signed_in.post(url, {"note": "back", "with_open_items": "on"})
    assert PlanRevision.objects.filter(plan=plan).count() == 3


def test_the_content_hash_is_stored_and_old_revisions_fall_back_to_the_snapshot(plan, consultant):
    first = PlanRevision.objects.get(plan=plan, number=1)
    assert first.content_sha256 == snapshot_content_hash(first.snapshot)
    PlanRevision.objects.filter(pk=first.pk).delete()  # deleting is allowed; updating is not
    legacy = PlanRevision(**{
        f.attname: getattr(first, f.attname) for f in PlanRevision._meta.concrete_fields
    })  # fmt: skip
    legacy.content_sha256 = ""
    legacy.save()
    with pytest.raises(services.NothingToPublish):
        services.revision_publish(plan=plan, user=consultant, with_open_items=True)


@pytest.mark.service
def test_two_publishers_at_once_make_one_revision_on_postgresql(postgres, demo):
    plan, user, _ = demo
    Plan.objects.filter(pk=plan.pk).update(notes="Published twice at once")
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def publish() -> None:
        try:
            fresh = Plan.objects.get(pk=plan.pk)
            barrier.wait(timeout=30)
            # the demo publishes with its open items (its sites' failing power checks)
            revision = services.revision_publish(plan=fresh, user=user, with_open_items=True)
            outcomes.append(f"published {revision.number}")
        except services.NothingToPublish as exc:
            outcomes.append(f"nothing since {exc.revision.number}")
        finally:
            connection.close()

    threads = [threading.Thread(target=publish) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)

    assert sorted(outcomes) == ["nothing since 2", "published 2"]
    assert PlanRevision.objects.filter(plan=plan).count() == 2
