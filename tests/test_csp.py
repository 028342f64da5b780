"""Content-Security-Policy: every page carries the header, and no template carries what the
policy forbids (inline scripts, inline event handlers, inline styles)."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"

# An inline script is a <script> with a body; json_script data blocks are allowed (never run).
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I)
EVENT_HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)
HTMX_HANDLER = re.compile(r"\shx-on[:\-]", re.I)
STYLE_ATTRIBUTE = re.compile(r"\sstyle\s*=", re.I)
STYLE_ELEMENT = re.compile(r"<style[\s>]", re.I)


def _templates():
    return sorted(TEMPLATES.rglob("*.html"))


def test_the_template_scan_finds_what_it_looks_for():
    bad = (
        '<script>alert(1)</script> <a onclick="x()"> <div hx-on:click="x()">'
        ' <p style="color:red"> <style>p{}</style>'
    )
    for pattern in (INLINE_SCRIPT, EVENT_HANDLER, HTMX_HANDLER, STYLE_ATTRIBUTE, STYLE_ELEMENT):
        assert pattern.search(bad), pattern
    good = '<script src="/static/js/app.js" defer></script><button data-confirm="Sure?">'
    for pattern in (INLINE_SCRIPT, EVENT_HANDLER, HTMX_HANDLER, STYLE_ATTRIBUTE, STYLE_ELEMENT):
        assert not pattern.search(good), pattern


@pytest.mark.parametrize("path", _templates(), ids=lambda p: str(p.relative_to(TEMPLATES)))
def test_no_template_has_inline_scripts_handlers_or_styles(path):
    text = path.read_text(encoding="utf-8")
    found = {
        name: pattern.findall(text)
        for name, pattern in {
            "inline <script>": INLINE_SCRIPT,
            "on*= handler": EVENT_HANDLER,
            "hx-on handler": HTMX_HANDLER,
            "style attribute": STYLE_ATTRIBUTE,
            "<style> element": STYLE_ELEMENT,
        }.items()
        if pattern.search(text)
    }
    assert found == {}


def _policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    return {part.split()[0]: part.split()[1:] for part in header.split(";") if part.strip()}


def _assert_strict(response, url):
    assert "Content-Security-Policy" in response, url
    policy = _policy(response)
    assert policy["script-src"] == ["'self'"], url
    assert "'unsafe-inline'" not in policy["style-src"], url
    assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"], url


def test_every_main_page_carries_the_policy(client, demo):
    from planner.sharing.models import ShareLink

    plan, user, _ = demo
    workload = plan.workloads.first()
    token = ShareLink.objects.filter(plan=plan, revoked_at=None).first().token
    public = [reverse("login"), f"/s/{token}/", "/s/wrong-token/", reverse("password_reset")]
    for url in public:
        _assert_strict(client.get(url), url)
    client.force_login(user)
    pages = [
        "/",
        reverse("organisation"),
        reverse("plan_list"),
        reverse("plan_detail", args=[plan.pk]),
        reverse("workload_sizing", args=[plan.pk, workload.pk]),
        reverse("facility:site_list", args=[plan.pk]),
        reverse("facility:placement", args=[plan.pk]),
        reverse("facility:tco", args=[plan.pk]),
        reverse("sourcing:bom", args=[plan.pk]),
        reverse("sourcing:timeline", args=[plan.pk]),
        reverse("sourcing:tariffs"),
        reverse("sharing:review", args=[plan.pk]),
        reverse("sharing:document_preview", args=[plan.pk, 1, "report"]),
        reverse("sharing:document_preview", args=[plan.pk, 1, "quote"]),
        reverse("catalog:list", args=["accelerators"]),
        reverse("catalog:compare"),
        reverse("calibration"),
        "/admin/",
        "/no-such-page/",
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code in {200, 404}, url
        _assert_strict(response, url)
