"""Client review: the consultant's revision, link, feedback and checklist pages, and the
public pages a client reaches through a share link (/s/<token>/...).

Consultant views check the organisation through ``org_object_or_404`` (404 across tenants);
viewers read, editors change. Public views go through :func:`public_link`, which answers a
wrong, expired or revoked token with the same plain page and status, rate-limits failed
guesses per client address (IPv6 per /64) without ever refusing a valid token, and marks
every response noindex, with referrers kept on this site.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
)
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_http_methods, require_POST
from django_htmx.http import HttpResponseStopPolling

from planner import jobs
from planner.client_ip import client_ip
from planner.pdf.render import render_html
from planner.permissions import can_edit, editor_required, member_required, require_editor
from planner.selectors import plans_with_client
from planner.sharing import checklist, notify, selectors, services
from planner.sharing.body import page_html, revision_body, revision_view_context
from planner.sharing.compare import compare
from planner.sharing.forms import (
    LATEST,
    CommentForm,
    DecisionForm,
    PublishForm,
    ReplyForm,
    ShareLinkForm,
    SignOffForm,
)
from planner.sharing.models import (
    CLIENT_DOCUMENT_KINDS,
    Comment,
    DocumentKind,
    DocumentStatus,
    PlanRevision,
    Section,
)
from planner.sharing.snapshot import plan_snapshot
from planner.tenancy import org_object_or_404

ROBOTS_HEADERS = {
    "X-Robots-Tag": "noindex, nofollow",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "private, no-store",
}


def _kind_or_404(kind: str) -> str:
    if kind not in DocumentKind.values:
        raise Http404("No such document.")
    return kind


def _client_kind_or_404(kind: str) -> str:
    """A document a share link may serve: the internal cost sheet is not one of them."""
    if kind not in CLIENT_DOCUMENT_KINDS:
        raise Http404("No such document.")
    return kind


def comment_threads(comments) -> list:
    """Comments in threads: each top comment followed by its replies (oldest first)."""
    comments = sorted(comments, key=lambda c: (c.created_at, c.pk))
    replies: dict[int, list] = {}
    for c in comments:
        if c.reply_to_id:
            replies.setdefault(c.reply_to_id, []).append(c)
    ordered = []
    for c in comments:
        if not c.reply_to_id:
            ordered.append(c)
            ordered.extend(replies.get(c.pk, []))
    return ordered


def _comments_by_section(comments) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for c in comment_threads(comments):
        grouped.setdefault(c.section, []).append(c)
    return grouped


# --- Consultant: revisions, links and feedback ------------------------------------------------


def _review_context(request, plan, *, publish_form=None, link_form=None) -> dict:
    revisions = list(selectors.revision_list(plan=plan))
    return {
        "plan": plan,
        "section": "review",
        "revisions": revisions,
        "links": selectors.share_link_list(plan=plan),
        "comments": comment_threads(selectors.comment_list(plan=plan)[:100]),
        "decisions": selectors.decision_list(plan=plan),
        "publish_form": publish_form or PublishForm(),
        "open_items": services.publish_blockers(plan=plan),
        "link_form": link_form or ShareLinkForm(revision_numbers=[r.number for r in revisions]),
        "can_edit": can_edit(request),
    }


@member_required
def review(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Revisions, share links, client comments and decisions of one plan."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    return render(request, "sharing/review.html", _review_context(request, plan))


@editor_required
@require_POST
def publish(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    form = PublishForm(request.POST)
    if not form.is_valid():
        context = _review_context(request, plan, publish_form=form)
        return render(request, "sharing/review.html", context, status=400)
    try:
        revision = services.revision_publish(
            plan=plan,
            user=request.user,
            note=form.cleaned_data["note"],
            with_open_items=form.cleaned_data["with_open_items"],
        )
    except services.NothingToPublish as exc:
        messages.info(request, str(exc))
        return redirect("sharing:revision", plan_id=plan.pk, number=exc.revision.number)
    except services.SharingError as exc:
        form.add_error(None, str(exc))
        context = _review_context(request, plan, publish_form=form)
        return render(request, "sharing/review.html", context, status=400)
    messages.success(request, f"Revision {revision.number} published. Later edits won't change it.")
    return redirect("sharing:revision", plan_id=plan.pk, number=revision.number)


@editor_required
@require_POST
def link_create(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    numbers = [r.number for r in selectors.revision_list(plan=plan)]
    form = ShareLinkForm(request.POST, revision_numbers=numbers)
    if form.is_valid():
        choice = form.cleaned_data["revision"]
        revision = (
            None
            if choice == LATEST
            else org_object_or_404(request, PlanRevision, plan=plan, number=int(choice))
        )
        try:
            link = services.share_link_create(
                plan=plan,
                user=request.user,
                revision=revision,
                expires_at=form.cleaned_data["expires_at"],
                note=form.cleaned_data["note"],
            )
        except services.SharingError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            messages.success(request, "Share link created: copy it from the list below.")
            return redirect(f"{reverse('sharing:review', args=[plan.pk])}#link-{link.pk}")
    context = _review_context(request, plan, link_form=form)
    return render(request, "sharing/review.html", context, status=400)


@member_required
def link_detail(request: HttpRequest, plan_id: int, link_id: int) -> HttpResponse:
    """One link: its state, URL and view log."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    link = org_object_or_404(request, selectors.share_links(), plan=plan, pk=link_id)
    return render(
        request,
        "sharing/link_detail.html",
        {
            "plan": plan,
            "section": "review",
            "link": link,
            "views": selectors.share_link_views(link=link),
            "can_edit": can_edit(request),
        },
    )


@editor_required
@require_POST
def link_revoke(request: HttpRequest, plan_id: int, link_id: int) -> HttpResponse:
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    link = org_object_or_404(request, selectors.share_links(), plan=plan, pk=link_id)
    services.share_link_revoke(link=link, user=request.user)
    messages.success(request, "Link revoked: it stops working at once.")
    return redirect("sharing:review", plan_id=plan.pk)


@member_required
def revision_detail(request: HttpRequest, plan_id: int, number: int) -> HttpResponse:
    """A published revision as the client sees it, with its feedback and documents."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    revision = org_object_or_404(request, PlanRevision, plan=plan, number=number)
    comments = selectors.comment_list(plan=plan, revision=revision).order_by("created_at", "pk")
    context = {
        "plan": plan,
        "section": "review",
        **revision_view_context(revision),
        "comments_by_section": _comments_by_section(comments),
        "decisions": selectors.decision_list(plan=plan, revision=revision),
        "documents": selectors.document_list(revision=revision),
        "previous": revision.number - 1 if revision.number > 1 else None,
        "sections": Section,
    }
    return render(request, "sharing/revision.html", context)


@member_required
def revision_compare(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Two revisions side by side (``?a=1&b=2``; defaults: the latest two)."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    numbers = [r.number for r in selectors.revision_list(plan=plan)]
    errors = {}

    def pick(name: str, default: int | None) -> int | None:
        raw = request.GET.get(name)
        if raw in (None, ""):
            return default
        try:
            value = int(raw)
        except ValueError:
            errors[name] = "Choose a revision number."
            return default
        if value not in numbers:
            errors[name] = f"There is no revision {value}."
            return default
        return value

    a = pick("a", numbers[1] if len(numbers) > 1 else None)
    b = pick("b", numbers[0] if numbers else None)
    comparison = None
    if a is not None and b is not None:
        before = selectors.revision_get(plan=plan, number=a)
        after = selectors.revision_get(plan=plan, number=b)
        comparison = compare(before.snapshot, after.snapshot)
    return render(
        request,
        "sharing/compare.html",
        {
            "plan": plan,
            "section": "review",
            "numbers": numbers,
            "a": a,
            "b": b,
            "comparison": comparison,
            "errors": errors,
        },  # fmt: skip
        status=400 if errors else 200,
    )


# --- Consultant: checklist ----------------------------------------------------------------------


@member_required
@require_http_methods(["GET", "POST"])
def checklist_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """The checklist evaluated from the plan as it is now, with hand sign-offs."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    form = SignOffForm(request.POST or None, initial={"name": request.user.get_full_name()})
    status = 200
    if request.method == "POST":
        require_editor(request)
        if form.is_valid():
            data = form.cleaned_data
            services.sign_off_record(
                plan=plan, user=request.user, item_key=data["item_key"], name=data["name"],
                signed_on=data["signed_on"], note=data["note"], withdraw=data["withdraw"],
            )  # fmt: skip
            verb = "withdrawn" if data["withdraw"] else "recorded"
            messages.success(request, f"Sign-off {verb}: {checklist.ITEM_TITLES[data['item_key']]}")
            return redirect("sharing:checklist", plan_id=plan.pk)
        status = 400
    snapshot = plan_snapshot(plan=plan)
    items = snapshot["checklist"]
    return render(
        request,
        "sharing/checklist.html",
        {
            "plan": plan,
            "section": "checklist",
            "items": items,
            "counts": checklist.summary(items),
            "form": form,
            "history": selectors.sign_off_history(plan=plan)[:50],
            "can_edit": can_edit(request),
        },
        status=status,
    )


# --- Consultant: documents ----------------------------------------------------------------------


def _pdf_response(document, *, inline: bool = False) -> FileResponse:
    return FileResponse(
        document.file.open("rb"),
        content_type="application/pdf",
        as_attachment=not inline,
        filename=services.document_filename(revision=document.revision, kind=document.kind),
    )


@member_required
def document_download(request: HttpRequest, plan_id: int, number: int, kind: str) -> HttpResponse:
    """The PDF of a revision: rendered now (quote, checklist) or from the worker (report)."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    revision = org_object_or_404(request, PlanRevision, plan=plan, number=number)
    kind = _kind_or_404(kind)
    if kind == DocumentKind.REPORT:
        document = selectors.document_get(revision=revision, kind=kind)
        if document is None or document.status != DocumentStatus.SUCCEEDED:
            document, _ = services.document_request(revision=revision, kind=kind)
            document.refresh_from_db()
            if document.status != DocumentStatus.SUCCEEDED:
                return render(request, "sharing/document_wait.html", {
                    "plan": plan, "section": "review", "revision": revision,
                    "document": document,
                    "status_url": reverse("sharing:document_status",
                                          args=[plan.pk, revision.number, kind]),
                    "download_url": reverse("sharing:document",
                                            args=[plan.pk, revision.number, kind]),
                })  # fmt: skip
    else:
        document = services.document_get_or_render(revision=revision, kind=kind)
    return _pdf_response(document)


@member_required
def document_status(request: HttpRequest, plan_id: int, number: int, kind: str) -> HttpResponse:
    """The polled progress partial; 286 (stop polling) once the document is finished."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    revision = org_object_or_404(request, PlanRevision, plan=plan, number=number)
    kind = _kind_or_404(kind)
    document = selectors.document_get(revision=revision, kind=kind)
    if document is None:
        raise Http404("Nothing is being rendered.")
    download = reverse("sharing:document", args=[plan.pk, revision.number, kind])
    return _status_response(request, document, download, reverse(
        "sharing:document_status", args=[plan.pk, revision.number, kind]))  # fmt: skip


def _status_response(request, document, download_url: str, status_url: str) -> HttpResponse:
    jobs.job_expire_if_lost(document)  # a render whose worker died says so and stops polling
    html = render_to_string(
        "sharing/_document_status.html",
        {"document": document, "download_url": download_url, "status_url": status_url},
        request=request,
    )
    if document.is_finished:
        return HttpResponseStopPolling(html)
    return HttpResponse(html)


@member_required
def document_preview(request: HttpRequest, plan_id: int, number: int, kind: str) -> HttpResponse:
    """The document's HTML, exactly as WeasyPrint receives it (for debugging layouts)."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    revision = org_object_or_404(request, PlanRevision, plan=plan, number=number)
    kind = _kind_or_404(kind)
    context = services.document_context(revision=revision, kind=kind)
    html = render_html(services.DOCUMENT_TEMPLATES[kind], {"doc": context, "preview": True})
    # Under the site's Content-Security-Policy: pdf.css and pdf-preview.css are static files,
    # the templates carry no inline style or script.
    return HttpResponse(html)


# --- Public (share link) ---------------------------------------------------------------------


def _client_ip(request: HttpRequest) -> str | None:
    # Behind TRUSTED_PROXY_COUNT proxies, the right-most X-Forwarded-For entry they did not
    # add; the same helper django-axes uses for login throttling.
    return client_ip(request)


def _with_robots_headers(response: HttpResponse) -> HttpResponse:
    for name, value in ROBOTS_HEADERS.items():
        response[name] = value
    return response


def link_invalid_response(request: HttpRequest, status: int = 404) -> HttpResponse:
    """The one page for wrong, expired and revoked tokens (and too many guesses)."""
    body = render_to_string("sharing/link_invalid.html")
    return _with_robots_headers(HttpResponse(body, status=status))


def public_link(view: Callable) -> Callable:
    """Resolve ``token`` to a valid link or answer with the plain invalid-link page."""

    @wraps(view)
    def wrapped(request: HttpRequest, token: str, *args, **kwargs) -> HttpResponse:
        access = services.share_link_resolve(token=token)
        if access is None:
            # Only failures are limited: a valid token is served whatever its address did.
            ip = _client_ip(request)
            if services.token_guesses_exceeded(ip=ip):
                return link_invalid_response(request, status=429)
            services.token_guess_failed(ip=ip)
            return link_invalid_response(request)
        try:
            response = view(request, access, *args, **kwargs)
        except Http404:
            # A valid link asked for something that is not there: the same plain page.
            response = link_invalid_response(request)
        return _with_robots_headers(response)

    return wrapped


def _log_view(request: HttpRequest, access) -> None:
    services.share_link_view_record(
        access=access,
        ip=_client_ip(request),
        user_agent=request.META.get("HTTP_USER_AGENT", ""),
        path=request.path.replace(access.link.token, "<token>"),
    )


def _public_context(request, access, *, comment_form=None, decision_form=None) -> dict:
    revision = access.revision
    comments, decisions = selectors.revision_feedback(revision=revision)
    return {
        "revision": revision,
        "body": revision_body(revision=revision),
        "link": access.link,
        "token": access.link.token,
        "comments_by_section": _comments_by_section(comments),
        "decisions": decisions,
        "comment_form": comment_form or CommentForm(),
        "decision_form": decision_form
        or DecisionForm(initial={"revision_number": revision.number}),
        "public": True,
    }


def _public_page(request, access, *, comment_form=None, decision_form=None, status=200):
    if comment_form is not None or decision_form is not None or messages.get_messages(request):
        context = _public_context(
            request, access, comment_form=comment_form, decision_form=decision_form
        )
        return render(request, "sharing/public.html", context, status=status)
    # The usual view: the same page for everyone until a comment or decision is added, so it
    # is rendered once per state (planner.sharing.body) and only the CSRF token differs.
    revision = access.revision
    key = (revision.pk, access.link.token, selectors.revision_feedback_version(revision=revision))

    def page(csrf_token: str) -> str:
        context = {**_public_context(request, access), "csrf_token": csrf_token}
        return render_to_string("sharing/public.html", context, request=request)

    return HttpResponse(page_html(key=key, render=page, csrf_token=get_token(request)))


@public_link
@require_http_methods(["GET"])
def public_page(request: HttpRequest, access) -> HttpResponse:
    """The read-only plan a client sees, with comment and decision forms."""
    _log_view(request, access)
    return _public_page(request, access)


@public_link
@require_POST
def public_comment(request: HttpRequest, access) -> HttpResponse:
    form = CommentForm(request.POST)
    if not form.is_valid():
        return _public_page(request, access, comment_form=form, status=400)
    data = form.cleaned_data
    comment = services.comment_add(
        revision=access.revision, link=access.link, section=data["section"],
        author_name=data["author_name"], body=data["body"], email=data["email"],
    )  # fmt: skip
    review_url = reverse("sharing:review", args=[access.revision.plan_id])
    notify.comment_notify(comment, request.build_absolute_uri(f"{review_url}#comment-{comment.pk}"))
    contact = getattr(comment, "contact", None)
    if contact is None:
        messages.success(request, "Thank you — your comment was sent to the consultant.")
    else:  # shown once, to the person who typed the address
        messages.success(request, format_html(
            "Thank you — your comment was sent to the consultant, and their reply will be "
            'e-mailed to {}. <a href="{}">Forget my address</a>',
            contact.email, reverse("sharing:contact_forget", args=[contact.forget_secret]),
        ))  # fmt: skip
    return redirect(
        f"{reverse('sharing:public', args=[access.link.token])}#section-{data['section']}"
    )


@public_link
@require_POST
def public_decision(request: HttpRequest, access) -> HttpResponse:
    form = DecisionForm(request.POST)
    if form.is_valid() and form.cleaned_data["revision_number"] != access.revision.number:
        form.add_error(
            None,
            f"Revision {access.revision.number} was published since you opened the page; "
            "read it before you decide.",
        )
    if not form.is_valid():
        return _public_page(request, access, decision_form=form, status=400)
    data = form.cleaned_data
    try:
        decision = services.decision_record(
            revision=access.revision, link=access.link, kind=data["kind"], name=data["name"],
            note=data["note"], ip=_client_ip(request),
        )  # fmt: skip
    except services.SharingError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        return _public_page(request, access, decision_form=form, status=400)
    review_url = reverse("sharing:review", args=[access.revision.plan_id])
    notify.decision_notify(decision, request.build_absolute_uri(review_url))
    messages.success(request, "Your decision was recorded.")
    return redirect(f"{reverse('sharing:public', args=[access.link.token])}#decision")


@public_link
@require_http_methods(["GET"])
def public_document(request: HttpRequest, access, kind: str) -> HttpResponse:
    """A PDF of the link's revision; the report may first show a progress page."""
    kind = _client_kind_or_404(kind)
    revision = access.revision
    _log_view(request, access)
    token = access.link.token
    if kind == DocumentKind.REPORT:
        document = selectors.document_get(revision=revision, kind=kind)
        if document is None or document.status != DocumentStatus.SUCCEEDED:
            document, _ = services.document_request(revision=revision, kind=kind)
            document.refresh_from_db()
            if document.status != DocumentStatus.SUCCEEDED:
                return render(request, "sharing/document_wait.html", {
                    "revision": revision, "document": document, "public": True,
                    "status_url": reverse("sharing:public_document_status", args=[token, kind]),
                    "download_url": reverse("sharing:public_document", args=[token, kind]),
                })  # fmt: skip
    else:
        document = services.document_get_or_render(revision=revision, kind=kind)
    return _pdf_response(document)


@public_link
@require_http_methods(["GET"])
def public_document_status(request: HttpRequest, access, kind: str) -> HttpResponse:
    kind = _client_kind_or_404(kind)
    document = selectors.document_get(revision=access.revision, kind=kind)
    if document is None:
        raise Http404("Nothing is being rendered.")
    token = access.link.token
    return _status_response(
        request, document,
        reverse("sharing:public_document", args=[token, kind]),
        reverse("sharing:public_document_status", args=[token, kind]),
    )  # fmt: skip


@require_http_methods(["GET", "POST"])
def contact_forget(request: HttpRequest, secret: str) -> HttpResponse:
    """The client's "forget my address": a confirmation page, then the address deleted.

    Works whatever the state of the share link (a revoked link must not keep an address);
    GET only asks, so a mail scanner opening the link forgets nothing. A wrong secret gets
    the invalid-link page and counts as a guess, like a wrong share token.
    """
    contact = services.contact_by_secret(secret=secret)
    if contact is None:
        ip = _client_ip(request)
        if services.token_guesses_exceeded(ip=ip):
            return link_invalid_response(request, status=429)
        services.token_guess_failed(ip=ip)
        return link_invalid_response(request)
    forgotten = False
    if request.method == "POST":
        services.contact_forget(contact=contact)
        forgotten = True
    response = render(
        request,
        "sharing/contact_forget.html",
        {"email": contact.email, "forgotten": forgotten, "secret": secret},
    )
    return _with_robots_headers(response)


# --- Consultant: replies and notifications ------------------------------------------------------


@editor_required
@require_POST
def comment_reply(request: HttpRequest, plan_id: int, comment_id: int) -> HttpResponse:
    """A consultant's reply to a client comment; the client sees it under their comment."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    parent = org_object_or_404(request, Comment, revision__plan=plan, pk=comment_id)
    form = ReplyForm(request.POST)
    try:
        if not form.is_valid():
            raise services.SharingError(" ".join(form.errors["body"]), "body")
        reply = services.comment_reply(
            parent=parent, user=request.user, body=form.cleaned_data["body"],
            site_url=_site_url(request),
        )  # fmt: skip
    except services.SharingError as exc:
        messages.error(request, f"Reply not sent: {exc}")
        return redirect(f"{reverse('sharing:review', args=[plan.pk])}#comment-{parent.pk}")
    if hasattr(reply, "email_delivery"):
        messages.success(
            request, "Reply added: the client sees it under their comment, and it is e-mailed "
            "to them (its delivery shows beside it).",
        )  # fmt: skip
    else:
        messages.success(request, "Reply added: the client sees it under their comment.")
    return redirect(f"{reverse('sharing:review', args=[plan.pk])}#comment-{reply.pk}")


def _site_url(request: HttpRequest) -> str:
    """The site's address as this request reached it, without the trailing slash."""
    return request.build_absolute_uri("/")[:-1]


@member_required
def reply_email_status(request: HttpRequest, plan_id: int, comment_id: int) -> HttpResponse:
    """The polled delivery of a reply's e-mail; 286 (stop polling) once sent or failed."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    delivery = org_object_or_404(
        request, selectors.reply_emails(), reply__revision__plan=plan, reply_id=comment_id
    )
    jobs.job_expire_if_lost(delivery)
    html = render_to_string(
        "sharing/_reply_delivery.html",
        {"d": delivery, "c": delivery.reply, "plan": plan, "can_edit": can_edit(request)},
        request=request,
    )
    return HttpResponseStopPolling(html) if delivery.is_finished else HttpResponse(html)


@editor_required
@require_POST
def reply_email_resend(request: HttpRequest, plan_id: int, comment_id: int) -> HttpResponse:
    """Send a reply's e-mail again after the mail server refused it."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    delivery = org_object_or_404(
        request, selectors.reply_emails(), reply__revision__plan=plan, reply_id=comment_id
    )
    if services.reply_email_resend(delivery=delivery, site_url=_site_url(request)):
        messages.success(request, "The reply's e-mail is queued again.")
    else:
        messages.info(request, f"The reply's e-mail is {delivery.status_label.lower()}.")
    return redirect(f"{reverse('sharing:review', args=[plan.pk])}#comment-{comment_id}")


@editor_required
@require_POST
def revision_notify(request: HttpRequest, plan_id: int, link_id: int) -> HttpResponse:
    """E-mail the client contact that the link's revision (or the latest) is published."""
    plan = org_object_or_404(request, plans_with_client(), pk=plan_id)
    link = org_object_or_404(request, selectors.share_links(), plan=plan, pk=link_id)
    revision = link.revision or selectors.revision_list(plan=plan).first()
    if revision is None or not link.is_valid():
        messages.error(
            request, "Nothing to notify: the link is not active or nothing is published."
        )
        return redirect("sharing:review", plan_id=plan.pk)
    url = request.build_absolute_uri(reverse("sharing:public", args=[link.token]))
    try:
        to = notify.revision_notify_client(revision, link, url)
    except ValueError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{to} is told that revision {revision.number} is ready.")
    return redirect("sharing:review", plan_id=plan.pk)
