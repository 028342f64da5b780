"""Share links: unguessable, expiring, revocable, logged, read-only, and silent about plans
they do not show."""

import re
from datetime import timedelta

import pytest
import redis
from django.core.cache.backends.redis import RedisCache
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from planner.models import Client as PlanClient
from planner.models import Plan
from planner.sharing import services
from planner.sharing.models import Comment, Decision, PlanRevision, ShareLink, ShareLinkView

EVIL = '<script>alert("x")</script><img src=x onerror="alert(1)">'


@pytest.fixture
def link(plan, consultant):
    return services.share_link_create(
        plan=plan, user=consultant, revision=None, expires_at=None, note="for the client"
    )


def _url(link, name="sharing:public", *args):
    return reverse(name, args=[link.token, *args])


def test_tokens_carry_at_least_128_bits_and_never_repeat(plan, consultant):
    tokens = {
        services.share_link_create(
            plan=plan, user=consultant, revision=None, expires_at=None, note=""
        ).token
        for _ in range(50)
    }
    assert len(tokens) == 50
    for token in tokens:
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)  # 32 random bytes = 256 bits


def test_the_link_page_is_read_only_logged_and_not_indexed(client, link, plan):
    response = client.get(
        _url(link), HTTP_USER_AGENT="ClientBrowser/1.0", REMOTE_ADDR="203.0.113.9"
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert plan.name in body and "revision" in body
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    assert response["Referrer-Policy"] == "same-origin"  # the token URL never leaves the site
    assert '<meta name="robots" content="noindex, nofollow">' in body
    # No way into the consultant's pages from the link page.
    assert "/plans/" not in body and "Sign out" not in body
    view = ShareLinkView.objects.get(link=link)
    assert (view.ip_address, view.user_agent) == ("203.0.113.9", "ClientBrowser/1.0")
    assert view.revision_number == 1 and link.token not in view.path


def test_the_consultant_sees_the_view_log(signed_in, client, link, plan):
    Client().get(_url(link), HTTP_USER_AGENT="Firefox/140", REMOTE_ADDR="198.51.100.7")
    page = signed_in.get(reverse("sharing:link_detail", args=[plan.pk, link.pk]))
    assert page.status_code == 200
    assert "198.51.100.7" in page.content.decode() and "Firefox/140" in page.content.decode()


def _one_char_off(token: str) -> str:
    return token[:-1] + ("A" if token[-1] != "A" else "B")


def test_wrong_expired_and_revoked_tokens_look_exactly_alike(client, plan, consultant, link):
    expired = services.share_link_create(
        plan=plan, user=consultant, revision=None,
        expires_at=timezone.now() + timedelta(seconds=1), note="",
    )  # fmt: skip
    ShareLink.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(days=1))
    revoked = services.share_link_create(
        plan=plan, user=consultant, revision=None, expires_at=None, note=""
    )
    services.share_link_revoke(link=revoked, user=consultant)
    responses = [
        client.get(reverse("sharing:public", args=[token]))
        for token in ("x" * 43, expired.token, revoked.token, _one_char_off(link.token))
    ]
    statuses = {r.status_code for r in responses}
    bodies = {r.content for r in responses}
    assert statuses == {404} and len(bodies) == 1
    body = bodies.pop().decode()
    assert "no longer valid" in body and plan.name not in body and plan.client.name not in body
    assert all(r["X-Robots-Tag"] == "noindex, nofollow" for r in responses)
    # Documents and forms behind a dead link are the same page too.
    assert client.get(_url(revoked, "sharing:public_document", "quote")).content.decode() == body
    assert client.post(_url(expired, "sharing:public_comment"), {"body": "x"}).status_code == 404


def test_revoking_takes_effect_at_once(client, signed_in, link, plan):
    assert client.get(_url(link)).status_code == 200
    signed_in.post(reverse("sharing:link_revoke", args=[plan.pk, link.pk]))
    assert client.get(_url(link)).status_code == 404
    assert client.get(_url(link, "sharing:public_document", "quote")).status_code == 404


def _guess(client, i, **meta):
    return client.get(reverse("sharing:public", args=[f"guess-{i}"]), **meta)


def test_failed_guesses_are_rate_limited_per_ip_but_valid_tokens_still_serve(client, link):
    for i in range(services.FAILED_GUESS_LIMIT):
        r = _guess(client, i, REMOTE_ADDR="192.0.2.1")
        assert r.status_code == 404
    blocked = _guess(client, "x", REMOTE_ADDR="192.0.2.1")
    assert blocked.status_code == 429
    assert blocked.content == r.content  # the same plain page
    # Only failures are limited: the guesser's own valid link still serves, and so do others.
    assert client.get(_url(link), REMOTE_ADDR="192.0.2.1").status_code == 200
    assert client.get(_url(link, "sharing:public_document", "quote"), REMOTE_ADDR="192.0.2.1")
    assert client.get(_url(link), REMOTE_ADDR="192.0.2.2").status_code == 200
    assert _guess(client, "y", REMOTE_ADDR="192.0.2.2").status_code == 404


def test_guesses_from_one_ipv6_64_count_together(client, link):
    for i in range(40):
        r = _guess(client, i, REMOTE_ADDR=f"2001:db8:1:2::{i + 1:x}")
    assert r.status_code == 429  # 40 addresses of one /64 are one client
    assert _guess(client, "z", REMOTE_ADDR="2001:db8:1:2:ffff::9").status_code == 429
    assert _guess(client, "z", REMOTE_ADDR="2001:db8:1:3::1").status_code == 404  # next /64
    assert client.get(_url(link), REMOTE_ADDR="2001:db8:1:2::1").status_code == 200


def test_behind_the_proxy_one_guesser_does_not_lock_out_other_clients(client, link, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.5"  # every request reaches Django from the proxy's socket address
    for i in range(services.FAILED_GUESS_LIMIT + 5):
        r = _guess(client, i, REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="198.51.100.66")
    assert r.status_code == 429
    # Another client behind the same proxy is neither limited on wrong tokens nor refused.
    assert (
        _guess(client, "a", REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="203.0.113.7").status_code
        == 404
    )
    page = client.get(_url(link), REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert page.status_code == 200
    # Forging a left-most entry does not give the guesser a fresh address.
    forged = _guess(client, "b", REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="1.2.3.4, 198.51.100.66")
    assert forged.status_code == 429
    assert ShareLinkView.objects.filter(link=link, ip_address="203.0.113.7").exists()


def test_without_trusted_proxies_x_forwarded_for_is_ignored(client, link):
    for i in range(services.FAILED_GUESS_LIMIT):
        _guess(client, i, REMOTE_ADDR="192.0.2.9", HTTP_X_FORWARDED_FOR=f"198.18.0.{i}")
    assert (
        _guess(client, "x", REMOTE_ADDR="192.0.2.9", HTTP_X_FORWARDED_FOR="198.18.1.1").status_code
        == 429
    )


class _DownCache:
    """A cache whose server is down (redis-py raises its ConnectionError) or hangs (timeout)."""

    def __init__(self, error):
        self.error = error

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise self.error

        return fail


@pytest.mark.parametrize(
    "error",
    [
        redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379."),
        redis.exceptions.TimeoutError("Timeout reading from socket"),
        ConnectionError("connection refused"),
    ],
    ids=["redis-down", "redis-hung", "socket"],
)
def test_the_share_page_serves_when_the_cache_is_down(client, link, monkeypatch, caplog, error):
    monkeypatch.setattr(services, "cache", _DownCache(error))
    assert client.get(_url(link), REMOTE_ADDR="192.0.2.1").status_code == 200
    for i in range(services.FAILED_GUESS_LIMIT + 2):  # nothing counted, nothing refused
        assert _guess(client, i, REMOTE_ADDR="192.0.2.1").status_code == 404
    assert "the cache is unavailable" in caplog.text


def test_the_share_page_serves_with_a_real_redis_client_and_no_server(client, link, monkeypatch):
    # Django's own Redis backend pointed at a port nobody listens on: redis-py's real errors.
    down = RedisCache("redis://127.0.0.1:1/0", {"OPTIONS": {"socket_connect_timeout": 0.5}})
    monkeypatch.setattr(services, "cache", down)
    assert client.get(_url(link), REMOTE_ADDR="192.0.2.1").status_code == 200
    assert _guess(client, "x", REMOTE_ADDR="192.0.2.1").status_code == 404


def test_a_link_shows_only_its_plan(client, link, plan, org_b, consultant):
    other_client = PlanClient.objects.create(organisation=org_b, name="Secret Bank")
    other = Plan.objects.create(organisation=org_b, client=other_client, name="Secret plan")
    body = client.get(_url(link)).content.decode()
    assert "Secret" not in body
    # The consultant's pages stay closed to someone holding only a link.
    for url in (reverse("plan_detail", args=[plan.pk]), reverse("plan_edit", args=[plan.pk]),
                reverse("sharing:review", args=[plan.pk]),
                reverse("sharing:document", args=[plan.pk, 1, "quote"]),
                reverse("plan_detail", args=[other.pk])):  # fmt: skip
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response.url


def test_a_revision_link_stays_on_its_revision_and_latest_follows(client, plan, consultant, link):
    first = PlanRevision.objects.get(plan=plan, number=1)
    pinned = services.share_link_create(
        plan=plan, user=consultant, revision=first, expires_at=None, note=""
    )
    plan.notes = "Second pass."
    plan.save()
    services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    assert client.get(_url(pinned)).context["revision"].number == 1
    assert client.get(_url(link)).context["revision"].number == 2


def test_comments_are_stored_as_typed_and_escaped_everywhere(client, signed_in, link, plan):
    response = client.post(_url(link, "sharing:public_comment"),
                           {"section": "bom", "author_name": EVIL, "body": EVIL})  # fmt: skip
    assert response.status_code == 302
    comment = Comment.objects.get(body=EVIL)
    assert comment.author_name == EVIL[:120] and comment.section == "bom"
    pages = [
        client.get(_url(link)).content.decode(),
        signed_in.get(reverse("sharing:review", args=[plan.pk])).content.decode(),
        signed_in.get(reverse("sharing:revision", args=[plan.pk, 1])).content.decode(),
    ]
    for page in pages:
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


def test_forms_on_the_link_page_are_csrf_protected(link):
    strict = Client(enforce_csrf_checks=True)
    assert strict.get(_url(link)).status_code == 200
    response = strict.post(_url(link, "sharing:public_comment"),
                           {"section": "general", "author_name": "A", "body": "B"})  # fmt: skip
    assert response.status_code == 403
    assert not Comment.objects.filter(author_name="A").exists()
    token = strict.cookies["csrftoken"].value
    ok = strict.post(_url(link, "sharing:public_comment"),
                     {"section": "general", "author_name": "A", "body": "B",
                      "csrfmiddlewaretoken": token})  # fmt: skip
    assert ok.status_code == 302


def test_link_forms_refuse_other_origins_even_with_the_token(link):
    # same-origin referrer policy: browsers send the real Origin, so Django's check applies.
    strict = Client(enforce_csrf_checks=True)
    strict.get(_url(link))
    token = strict.cookies["csrftoken"].value
    data = {"section": "general", "author_name": "N", "body": "origin null"}
    assert strict.post(_url(link, "sharing:public_comment"), data,
                       HTTP_ORIGIN="null").status_code == 403  # fmt: skip
    assert strict.post(_url(link, "sharing:public_comment"),
                       {**data, "csrfmiddlewaretoken": token},
                       HTTP_ORIGIN="https://evil.example").status_code == 403  # fmt: skip
    assert strict.post(_url(link, "sharing:public_comment"),
                       {**data, "csrfmiddlewaretoken": token},
                       HTTP_ORIGIN="null").status_code == 403  # fmt: skip
    assert strict.post(_url(link, "sharing:public_comment"),
                       {**data, "csrfmiddlewaretoken": token},
                       HTTP_ORIGIN="http://testserver").status_code == 302  # fmt: skip
    assert Comment.objects.filter(body="origin null").count() == 1


def test_bad_comment_input_is_a_400_next_to_the_field_keeping_what_was_typed(client, link):
    response = client.post(_url(link, "sharing:public_comment"),
                           {"section": "tco", "author_name": "Sanne Typed", "body": "  "})  # fmt: skip
    assert response.status_code == 400
    body = response.content.decode()
    assert "This field is required." in body and 'value="Sanne Typed"' in body
    assert client.post(_url(link, "sharing:public_comment"),
                       {"section": "nope", "author_name": "A", "body": "B"}).status_code == 400  # fmt: skip


def test_decisions_record_the_revision_and_keep_history(client, signed_in, link, plan):
    Decision.objects.all().delete()
    approve = {"revision_number": 1, "kind": "approved", "name": "Sanne", "note": ""}
    assert client.post(_url(link, "sharing:public_decision"), approve).status_code == 302
    change = {"revision_number": 1, "kind": "changes_requested", "name": "Sanne", "note": ""}
    refused = client.post(_url(link, "sharing:public_decision"), change)
    assert refused.status_code == 400
    assert "Say what should change." in refused.content.decode()
    assert 'value="Sanne"' in refused.content.decode()
    change["note"] = "Use the Frankfurt site."
    assert client.post(_url(link, "sharing:public_decision"), change).status_code == 302
    decisions = list(Decision.objects.order_by("created_at", "pk"))
    assert [(d.kind, d.revision_number) for d in decisions] == [
        ("approved", 1), ("changes_requested", 1)]  # fmt: skip
    review = signed_in.get(reverse("sharing:review", args=[plan.pk])).content.decode()
    assert "Approved" in review and "Changes requested" in review and "Frankfurt" in review


def test_a_decision_on_an_outdated_page_is_refused(client, link, plan, consultant):
    plan.notes = "Second pass."
    plan.save()
    services.revision_publish(plan=plan, user=consultant, with_open_items=True)
    stale = {"revision_number": 1, "kind": "approved", "name": "Sanne", "note": ""}
    response = client.post(_url(link, "sharing:public_decision"), stale)
    assert response.status_code == 400 and "Revision 2 was published" in response.content.decode()


def test_documents_download_through_a_valid_link(client, link,
                                                django_capture_on_commit_callbacks):  # fmt: skip
    quote = client.get(_url(link, "sharing:public_document", "quote"))
    assert quote.status_code == 200 and quote["Content-Type"] == "application/pdf"
    assert b"".join(quote.streaming_content).startswith(b"%PDF")
    assert quote["X-Robots-Tag"] == "noindex, nofollow"
    # The report is queued for the worker on commit; meanwhile a page polls its progress.
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        waiting = client.get(_url(link, "sharing:public_document", "report"))
        assert (
            waiting.status_code == 200 and "Preparing the plan report" in waiting.content.decode()
        )
        assert 'hx-trigger="every 1s"' in waiting.content.decode()
        assert client.get(_url(link, "sharing:public_document_status", "report")).status_code == 200
    assert len(callbacks) == 1  # the task ran (eagerly) once the request committed
    status = client.get(_url(link, "sharing:public_document_status", "report"))
    assert status.status_code == 286 and "Download the PDF" in status.content.decode()
    report = client.get(_url(link, "sharing:public_document", "report"))
    assert report.status_code == 200 and report["Content-Type"] == "application/pdf"
    assert client.get(_url(link, "sharing:public_document", "nonsense")).status_code == 404
    assert ShareLinkView.objects.filter(link=link, path__endswith=".pdf").count() == 3
