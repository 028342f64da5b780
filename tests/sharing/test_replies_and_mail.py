"""Consultant replies in the client's comment thread, and the e-mails around feedback."""

import html
import re

from django.core import mail
from django.urls import reverse

from planner.sharing.models import Comment, ShareLink


def _text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def _link(plan) -> ShareLink:
    return ShareLink.objects.filter(plan=plan, revoked_at__isnull=True).latest("pk")


def test_comment_reply_and_approval_with_mail(
    client, plan, consultant, django_capture_on_commit_callbacks
):
    consultant.email = "dana@consultancy.example"
    consultant.save()
    link = _link(plan)
    public = reverse("sharing:public", args=[link.token])

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("sharing:public_comment", args=[link.token]),
            {"section": "tco", "author_name": "Sanne", "body": "Why is cloud cheaper per request?"},
        )
    assert response.status_code == 302
    comment = Comment.objects.get(body__startswith="Why is cloud")
    assert len(mail.outbox) == 1
    sent = mail.outbox[0]
    assert sent.to == ["dana@consultancy.example"]
    assert "Sanne commented on 'Cost over time (TCO)'" in sent.body
    assert f"/plans/{plan.pk}/review/#comment-{comment.pk}" in sent.body

    client.force_login(consultant)
    response = client.post(
        reverse("sharing:comment_reply", args=[plan.pk, comment.pk]),
        {"body": "Cloud has no racks to pay for; at your volume owning wins from month 14."},
    )
    assert response.status_code == 302
    reply = Comment.objects.get(reply_to=comment)
    assert (reply.section, reply.revision_id, reply.from_client) == (
        "tco",
        comment.revision_id,
        False,
    )
    review = _text(client.get(reverse("sharing:review", args=[plan.pk])))
    assert review.index("Why is cloud cheaper") < review.index("owning wins from month 14")
    client.logout()

    # The client sees the reply under their comment, in the same section.
    page = _text(client.get(public))
    section = page[page.index("Why is cloud cheaper") :]
    assert "owning wins from month 14" in section[:400] and "(consultant)" in section[:400]

    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("sharing:public_decision", args=[link.token]),
            {"kind": "approved", "name": "Sanne", "note": "Thanks, approved.",
             "revision_number": link.revision.number if link.revision else
             plan.revisions.order_by("-number").first().number},
        )  # fmt: skip
    assert response.status_code == 302, _text(response)[:500]
    assert len(mail.outbox) == 1 and "approved" in mail.outbox[0].subject.lower()


def test_an_empty_reply_is_refused_and_viewers_cannot_reply(client, plan, consultant):
    comment = Comment.objects.filter(revision__plan=plan, from_client=True).first()
    client.force_login(consultant)
    url = reverse("sharing:comment_reply", args=[plan.pk, comment.pk])
    response = client.post(url, {"body": "   "}, follow=True)
    assert "Reply not sent: Write a reply." in _text(response)
    # A NUL byte (which PostgreSQL cannot store) is refused by the same input rules as every
    # other form, not answered with a server error.
    response = client.post(url, {"body": "Thanks\x00 for asking"}, follow=True)
    assert response.status_code == 200
    assert "Reply not sent: Null characters are not allowed." in _text(response)
    assert not Comment.objects.filter(reply_to=comment).exists()


def test_another_organisation_cannot_reply(client, plan, owner_b):
    comment = Comment.objects.filter(revision__plan=plan).first()
    client.force_login(owner_b)
    url = reverse("sharing:comment_reply", args=[plan.pk, comment.pk])
    assert client.post(url, {"body": "hi"}).status_code == 404
    assert not Comment.objects.filter(reply_to=comment).exists()


def test_the_client_is_told_of_a_new_revision(
    client, plan, consultant, django_capture_on_commit_callbacks
):
    plan.client.contact_email = "sanne@northwind.example"
    plan.client.save()
    link = _link(plan)
    client.force_login(consultant)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("sharing:revision_notify", args=[plan.pk, link.pk]), follow=True
        )
    assert "sanne@northwind.example is told that revision" in _text(response)
    assert mail.outbox[-1].to == ["sanne@northwind.example"]
    assert f"/s/{link.token}/" in mail.outbox[-1].body
