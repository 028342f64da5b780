"""The share page under load: a revision's body is rendered once and stored, the page is
memoised per state, and none of it may show a stale comment or decision, serve a dead link,
or break a form's CSRF token."""

import re
from datetime import timedelta

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from planner.sharing import body as body_module
from planner.sharing import services
from planner.sharing.body import SLOT_RE, revision_body, revision_body_render, revision_view_context
from planner.sharing.forms import CommentForm
from planner.sharing.models import Comment, PlanRevision, RevisionBody, ShareLinkView

CSRF_VALUE = re.compile(r'(name="csrfmiddlewaretoken" value=")[^"]+')


@pytest.fixture
def link(plan, consultant):
    return services.share_link_create(
        plan=plan, user=consultant, revision=None, expires_at=None, note="for the client"
    )


def _url(link, name="sharing:public"):
    return reverse(name, args=[link.token])


def _body_of(page: str) -> str:
    """The part of the public page between the document tabs and the decision form."""
    return page.split("</nav>", 1)[1].split('<section id="decision"', 1)[0]


def test_the_stored_body_is_a_fresh_render_and_the_page_matches_one(client, link, plan):
    page = client.get(_url(link)).content.decode()
    revision = PlanRevision.objects.get(plan=plan, number=1)
    stored = RevisionBody.objects.get(revision=revision)
    assert stored.fingerprint == body_module.fingerprint()
    assert stored.html == revision_body_render(revision)[0]
    assert len(SLOT_RE.findall(stored.html)) == 7  # one comment slot per section
    # The whole body, comments and comment forms included, as if rendered from the snapshot.
    comments = Comment.objects.filter(revision=revision).order_by("created_at", "pk")
    grouped: dict[str, list] = {}
    for comment in comments:
        grouped.setdefault(comment.section, []).append(comment)
    fresh = render_to_string(
        "sharing/_revision_body.html",
        {**revision_view_context(revision), "comments_by_section": grouped, "public": True,
         "token": link.token, "comment_form": CommentForm(), "csrf_token": "x"},
    )  # fmt: skip
    assert "Can go-live move two weeks earlier" in fresh  # the demo's comment is in it

    def normal(html):
        return re.sub(r"\s+", " ", CSRF_VALUE.sub(r"\1", html)).strip()

    assert normal(_body_of(page)) == normal(fresh)


def test_the_body_is_rendered_once_then_read_back_in_every_process(client, link, plan, monkeypatch):
    assert client.get(_url(link)).status_code == 200
    assert RevisionBody.objects.count() == 1

    def no_render(revision):
        raise AssertionError("the stored body was rendered again")

    monkeypatch.setattr(body_module, "revision_body_render", no_render)
    body_module.memo_clear()  # another process: nothing in memory, the row in the database
    second = Client().get(_url(link))
    assert second.status_code == 200 and "Bill of materials" in second.content.decode()
    assert RevisionBody.objects.count() == 1


def test_changed_rendering_code_renders_a_new_body(client, link, plan, monkeypatch):
    client.get(_url(link))
    body_module.memo_clear()
    monkeypatch.setattr(body_module, "fingerprint", lambda: "f" * 64)
    assert client.get(_url(link)).status_code == 200
    assert sorted(RevisionBody.objects.values_list("fingerprint", flat=True))[-1] == "f" * 64
    assert RevisionBody.objects.count() == 2


def test_comments_and_decisions_after_publication_show_at_once(client, link, plan):
    revision = PlanRevision.objects.get(plan=plan, number=1)
    first = client.get(_url(link)).content.decode()
    assert "A comment written after the page was memoised" not in first
    services.comment_add(
        revision=revision, link=link, section="tco", author_name="Late Reader",
        body="A comment written after the page was memoised",
    )  # fmt: skip
    second = client.get(_url(link)).content.decode()
    assert "A comment written after the page was memoised" in second
    assert 'data-testid="comments-tco"' in second
    services.decision_record(
        revision=revision, link=link, kind="changes_requested", name="Second Thoughts",
        note="Please price the Frankfurt suite.",
    )  # fmt: skip
    third = client.get(_url(link)).content.decode()
    assert "Second Thoughts" in third and "Please price the Frankfurt suite." in third
    # A deleted comment disappears too (the admin can delete rows).
    Comment.objects.filter(author_name="Late Reader").delete()
    assert "A comment written after" not in client.get(_url(link)).content.decode()


def test_a_new_revision_shows_through_a_latest_link_at_once(client, link, plan, consultant):
    client.get(_url(link))
    plan.name = "Renamed before revision 2"
    plan.save()
    services.revision_publish(plan=plan, user=consultant, note="Second", with_open_items=True)
    page = client.get(_url(link)).content.decode()
    assert 'data-testid="revision-number">2<' in page
    assert "Renamed before revision 2" in page


def test_revoked_and_expired_links_answer_404_even_with_the_page_memoised(client, link, plan):
    assert client.get(_url(link)).status_code == 200
    services.share_link_revoke(link=link, user=None)
    assert client.get(_url(link)).status_code == 404
    other = services.share_link_create(
        plan=plan,
        user=None,
        revision=None,
        expires_at=timezone.now() + timedelta(hours=1),
        note="",
    )
    assert client.get(_url(other)).status_code == 200
    type(other).objects.filter(pk=other.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.get(_url(other)).status_code == 404


def test_every_visitor_of_a_memoised_page_gets_a_working_csrf_token(link):
    Client().get(_url(link))  # memoises the page
    for author in ("First", "Second"):
        strict = Client(enforce_csrf_checks=True)
        page = strict.get(_url(link)).content.decode()
        tokens = set(CSRF_VALUE.findall(page))
        form_token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        assert "csrftoken" in strict.cookies and body_module.CSRF_PLACEHOLDER not in page
        assert len(tokens) == 1  # every form of the page carries this request's token
        response = strict.post(_url(link, "sharing:public_comment"),
                               {"section": "general", "author_name": author, "body": "hello",
                                "csrfmiddlewaretoken": form_token})  # fmt: skip
        assert response.status_code == 302
    assert Comment.objects.filter(body="hello").count() == 2


def test_a_message_after_a_comment_is_shown_once(client, link):
    client.get(_url(link))
    response = client.post(_url(link, "sharing:public_comment"),
                           {"section": "general", "author_name": "Anna", "body": "Noted."},
                           follow=True)  # fmt: skip
    assert "your comment was sent" in response.content.decode()
    assert "your comment was sent" not in client.get(_url(link)).content.decode()


def test_every_view_is_logged_even_from_the_memo(client, link):
    for _ in range(3):
        client.get(_url(link))
    assert ShareLinkView.objects.filter(link=link).count() == 3


def test_share_page_queries_stay_few(client, link, django_assert_max_num_queries):
    client.get(_url(link))  # the first view renders and stores the body
    # Link + latest revision, the feedback version, the view log: nothing per section.
    with django_assert_max_num_queries(4):
        assert client.get(_url(link)).status_code == 200
    body_module.memo_clear()
    # Another process: the stored body, the comments and decisions, and the same four.
    with django_assert_max_num_queries(7):
        assert client.get(_url(link)).status_code == 200


def test_a_revision_link_reads_no_snapshot_per_view(client, plan, consultant):
    revision = PlanRevision.objects.get(plan=plan, number=1)
    link = services.share_link_create(
        plan=plan, user=consultant, revision=revision, expires_at=None, note=""
    )
    client.get(_url(link))
    revision_body(revision=revision)  # memoised
    access = services.share_link_resolve(token=link.token)
    assert "snapshot" in access.revision.get_deferred_fields()
