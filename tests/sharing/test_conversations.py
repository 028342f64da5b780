"""Conversations both ways: a client may leave an e-mail address with a comment, the
consultant's reply is e-mailed to it with a link back to the share page, the consultant sees
the delivery (sent, or not sent with the reason, and can send again), and the client can have
the address forgotten. The address never reaches the share page other clients read."""

import html
import re

from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.urls import reverse

from planner.sharing import services
from planner.sharing.models import Comment, CommentContact, ReplyEmail, ShareLink
from planner.sharing.tasks import reply_email_task

ADDRESS = "sanne.devries@northwind.example"


class RefusingBackend(BaseEmailBackend):
    """A mail server that refuses every message, as an SMTP server that is down would."""

    def send_messages(self, messages):
        raise ConnectionRefusedError("[Errno 111] Connection refused by mail.example.com:587")


def _text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def _link(plan) -> ShareLink:
    return ShareLink.objects.filter(plan=plan, revoked_at__isnull=True).latest("pk")


def _comment(client, link, capture, **extra) -> Comment:
    data = {"section": "tco", "author_name": "Sanne", "body": "Why is cloud cheaper?", **extra}
    with capture(execute=True):
        response = client.post(reverse("sharing:public_comment", args=[link.token]), data)
    assert response.status_code == 302, _text(response)[:400]
    return Comment.objects.filter(revision__plan=link.plan, from_client=True).latest("pk")


def _reply(client, consultant, comment, capture, body="Owning wins from month 14.") -> Comment:
    client.force_login(consultant)
    with capture(execute=True):  # the e-mail job runs after the commit (eager in tests)
        response = client.post(
            reverse("sharing:comment_reply", args=[comment.revision.plan_id, comment.pk]),
            {"body": body},
        )
    assert response.status_code == 302
    return Comment.objects.get(reply_to=comment, body=body)


def _to(address: str) -> list:
    return [m for m in mail.outbox if m.to == [address]]


def test_the_reply_reaches_the_address_the_client_gave(
    client, plan, consultant, django_capture_on_commit_callbacks
):
    link = _link(plan)
    comment = _comment(client, link, django_capture_on_commit_callbacks, email=ADDRESS)
    assert comment.contact.email == ADDRESS
    assert not _to(ADDRESS)  # nothing to the client until the consultant replies
    # The notice after commenting tells the client where replies go and how to forget it.
    page = client.get(reverse("sharing:public", args=[link.token]))
    notice = _text(page)
    assert f"their reply will be e-mailed to {ADDRESS}. Forget my address" in notice
    forget_path = reverse("sharing:contact_forget", args=[comment.contact.forget_secret])
    assert f'href="{forget_path}"' in page.content.decode()

    reply = _reply(client, consultant, comment, django_capture_on_commit_callbacks)

    [sent] = _to(ADDRESS)
    public = f"http://testserver/s/{link.token}/#comment-{reply.pk}"
    assert sent.subject == f"{plan.name}: {reply.author_name} replied to your comment"
    assert public in sent.body
    assert "> Why is cloud cheaper?" in sent.body and "Owning wins from month 14." in sent.body
    assert f"http://testserver{forget_path}" in sent.body
    delivery = ReplyEmail.objects.get(reply=reply)
    assert (delivery.status, delivery.attempts, delivery.error) == ("succeeded", 1, "")

    # The consultant sees the address beside the comment and "Sent" beside the reply.
    review = client.get(reverse("sharing:review", args=[plan.pk]))
    text = _text(review)
    assert f"replies e-mailed to {ADDRESS}" in text
    assert re.search(r"E-mail to the client: Sent \d{4}-\d\d-\d\d \d\d:\d\d", text)
    client.logout()

    # Other clients reading the link see the reply, never the address.
    fresh = client.get(reverse("sharing:public", args=[link.token])).content.decode()
    assert "Owning wins from month 14." in fresh
    assert ADDRESS not in fresh and "northwind.example" not in fresh


def test_a_refused_mail_is_recorded_shown_and_sent_again(
    client, plan, consultant, owner_b, settings, django_capture_on_commit_callbacks
):
    link = _link(plan)
    comment = _comment(client, link, django_capture_on_commit_callbacks, email=ADDRESS)
    settings.EMAIL_BACKEND = "tests.sharing.test_conversations.RefusingBackend"

    reply = _reply(client, consultant, comment, django_capture_on_commit_callbacks)

    delivery = ReplyEmail.objects.get(reply=reply)
    assert delivery.status == "failed"
    assert delivery.attempts == settings.JOBS_MAX_ATTEMPTS  # retried before giving up
    assert "Connection refused by mail.example.com:587" in delivery.error
    text = _text(client.get(reverse("sharing:review", args=[plan.pk])))
    assert (
        "E-mail to the client: Not sent — ConnectionRefusedError: [Errno 111] Connection "
        f"refused by mail.example.com:587 (after {settings.JOBS_MAX_ATTEMPTS} attempts)"
    ) in text
    assert "Send again" in text
    assert not _to(ADDRESS)

    resend = reverse("sharing:reply_email_resend", args=[plan.pk, reply.pk])
    # Another organisation cannot reach it.
    client.force_login(owner_b)
    assert client.post(resend).status_code == 404
    # The server is back: sending again delivers it and the page says so.
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    client.force_login(consultant)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(resend, follow=True)
    assert "The reply's e-mail is queued again." in _text(response)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.error) == ("succeeded", "")
    assert len(_to(ADDRESS)) == 1
    assert "E-mail to the client: Sent" in _text(
        client.get(reverse("sharing:review", args=[plan.pk]))
    )
    # A sent e-mail is not sent twice.
    response = client.post(resend, follow=True)
    assert "The reply's e-mail is sent." in _text(response)
    assert len(_to(ADDRESS)) == 1


def test_no_address_no_email_and_a_bad_address_is_refused_beside_its_field(
    client, plan, consultant, django_capture_on_commit_callbacks
):
    link = _link(plan)
    before = Comment.objects.count()
    response = client.post(
        reverse("sharing:public_comment", args=[link.token]),
        {"section": "bom", "author_name": "Sanne", "body": "Lead times?", "email": "sanne@"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    field = page[page.index('id="c-bom-email"') :]
    assert "Enter an e-mail address such as name@example.com." in field[:900]
    assert Comment.objects.count() == before

    comment = _comment(client, link, django_capture_on_commit_callbacks)
    assert not CommentContact.objects.filter(comment=comment).exists()
    mail.outbox.clear()
    reply = _reply(client, consultant, comment, django_capture_on_commit_callbacks)
    assert not ReplyEmail.objects.filter(reply=reply).exists() and not mail.outbox


def test_the_client_has_the_address_forgotten(
    client, plan, consultant, django_capture_on_commit_callbacks
):
    link = _link(plan)
    first = _comment(client, link, django_capture_on_commit_callbacks, email=ADDRESS)
    second = _comment(
        client, link, django_capture_on_commit_callbacks, email=ADDRESS.upper(), body="And?"
    )
    url = reverse("sharing:contact_forget", args=[first.contact.forget_secret])

    # Opening the link (as a mail scanner would) only asks.
    page = client.get(url)
    assert page.status_code == 200 and page["X-Robots-Tag"] == "noindex, nofollow"
    assert "Forget my address" in _text(page)
    assert CommentContact.objects.filter(comment__in=[first, second]).count() == 2

    done = client.post(url)
    assert done.status_code == 200
    assert f"We deleted {ADDRESS} from the comments you left on this plan" in _text(done)
    assert not CommentContact.objects.filter(comment__in=[first, second]).exists()
    assert client.post(url).status_code == 404  # the secret went with the address
    assert client.get(reverse("sharing:contact_forget", args=["x" * 43])).status_code == 404

    mail.outbox.clear()
    reply = _reply(client, consultant, first, django_capture_on_commit_callbacks)
    assert not ReplyEmail.objects.filter(reply=reply).exists() and not mail.outbox


def test_an_address_forgotten_before_the_mail_leaves_is_not_used(
    client, plan, consultant, django_capture_on_commit_callbacks
):
    link = _link(plan)
    comment = _comment(client, link, django_capture_on_commit_callbacks, email=ADDRESS)
    reply = services.comment_reply(
        parent=comment, user=consultant, body="Noted.", site_url="https://plans.example.com"
    )  # queued on commit, which the test transaction never reaches
    # While it waits, the review page polls its delivery; once done, polling stops (286).
    client.force_login(consultant)
    status = reverse("sharing:reply_email_status", args=[plan.pk, reply.pk])
    waiting = client.get(status)
    assert waiting.status_code == 200 and 'hx-trigger="every 2s"' in waiting.content.decode()
    assert "E-mail to the client: Queued" in _text(waiting)
    services.contact_forget(contact=comment.contact)
    mail.outbox.clear()
    reply_email_task.apply(args=[reply.email_delivery.pk])
    delivery = ReplyEmail.objects.get(reply=reply)
    assert delivery.status == "failed" and "forget their address" in delivery.error
    assert not mail.outbox
    done = client.get(status)
    assert done.status_code == 286 and "hx-trigger" not in done.content.decode()
    assert "E-mail to the client: Not sent — The client asked us to forget" in _text(done)
