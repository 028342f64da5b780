"""Control characters posted into real pages' text fields are refused next to the field and
save nothing; a multi-line field keeps its line breaks and tabs (``planner.input_rules``).

Each case loads the demo plan's page, changes one field of the form a browser would submit
and posts it: BEL (U+0007) and ESC (U+001B, the start of a terminal colour code) are what a
paste from a terminal or a hostile script carries.
"""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from tests.html_forms import post_forms

BEL_MESSAGE = "Remove the control character U+0007: it cannot be typed or printed."
ESC_MESSAGE = "Remove the control character U+001B: it cannot be typed or printed."


def _edit_form(client, url, pick):
    page = client.get(url)
    assert page.status_code == 200
    return [f for f in post_forms(page.content.decode()) if pick(f)][0]


def _field_error(response, field: str) -> str:
    """The text of the error shown under ``field`` (its ``id_<field>_error`` element)."""
    text = response.content.decode()
    found = re.search(rf'<span id="id_{field}_error">(.*?)</span>', text, re.S)
    assert found, f"no error shown next to {field}"
    return html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).strip()


def _own(form) -> bool:
    return not form.attrs.get("action")


def _testid(value):
    return lambda form: form.attrs.get("data-testid") == value


def _pages(plan):
    """(page, URL, which form, the row it edits) for a few of the project's edit pages."""
    from sourcing.models import Supplier

    site = plan.sites.order_by("pk").first()
    supplier = Supplier.objects.filter(organisation=plan.organisation).order_by("pk").first()
    return {
        "plan": (reverse("plan_edit", args=[plan.pk]), _own, plan),
        "site": (
            reverse("facility:site_detail", args=[plan.pk, site.pk]),
            _testid("site-form"),
            site,
        ),
        "supplier": (reverse("sourcing:supplier_detail", args=[supplier.pk]), _own, supplier),
    }


@pytest.mark.parametrize(
    ("page", "field", "typed", "message"),
    [
        ("plan", "name", "Northwind\x07 rollout", BEL_MESSAGE),
        ("plan", "notes", "Budget agreed.\n\x1b[31mURGENT\x1b[0m", ESC_MESSAGE),
        ("site", "name", "\x1b[31mFrankfurt", ESC_MESSAGE),
        ("site", "upgrades", "+400 kW on 2027-03-01 transformer\x07", BEL_MESSAGE),
        ("supplier", "name", "Acme\x07 Servers", BEL_MESSAGE),
        ("supplier", "notes", "Call first\x07", BEL_MESSAGE),
        # A single-line field refuses a line break that a script (not a text box) sends.
        ("supplier", "name", "Acme\nServers", "Keep this to one line (no tabs or line breaks)."),
    ],
)
def test_a_control_character_is_refused_next_to_the_field(
    demo, signed_in, page, field, typed, message
):
    plan = demo[0]
    url, pick, row = _pages(plan)[page]
    before = {name: getattr(row, name, None) for name in ("name", "notes", "version")}
    form = _edit_form(signed_in, url, pick)
    response = signed_in.post(url, form.data | {field: typed})
    assert response.status_code == 400
    assert _field_error(response, field) == message
    row.refresh_from_db()
    assert {name: getattr(row, name, None) for name in before} == before  # nothing saved


def test_a_site_with_a_control_character_in_an_upgrade_adds_no_upgrade(demo, signed_in):
    plan = demo[0]
    url, pick, site = _pages(plan)["site"]
    upgrades = list(site.upgrades.values_list("ready_date", "added_kw", "note"))
    form = _edit_form(signed_in, url, pick)
    response = signed_in.post(url, form.data | {"upgrades": "+50 kW on 2028-01-01 \x1b[1mbig"})
    assert response.status_code == 400
    assert list(site.upgrades.values_list("ready_date", "added_kw", "note")) == upgrades


def test_a_text_box_keeps_its_line_breaks_and_tabs(demo, signed_in):
    plan = demo[0]
    url, pick, _ = _pages(plan)["plan"]
    form = _edit_form(signed_in, url, pick)
    notes = "Budget agreed.\r\n\tPhase 1: Frankfurt\r\n\tPhase 2: Dublin"
    response = signed_in.post(url, form.data | {"notes": notes})
    assert response.status_code == 302
    plan.refresh_from_db()
    assert plan.notes == notes


def test_a_parsed_text_field_checks_the_text_typed(demo, signed_in):
    """The workload's users-by-region field is parsed into shares: the rule applies to the
    text as typed, so a control character in a region name is named, not reported as an
    unknown region."""
    plan = demo[0]
    chat = plan.workloads.get(kind="chat")
    url = reverse("workload_sizing", args=[plan.pk, chat.pk])
    form = _edit_form(signed_in, url, lambda f: f.attrs.get("id") == "workload-form")
    before = chat.region_shares
    response = signed_in.post(url, form.data | {"region_shares": "eu-west\x07: 100"})
    assert response.status_code == 400
    assert _field_error(response, "region_shares") == BEL_MESSAGE
    chat.refresh_from_db()
    assert chat.region_shares == before


def test_a_reply_with_an_escape_code_is_refused_and_not_saved(client, demo):
    from planner.sharing.models import Comment

    plan, consultant = demo[0], demo[1]
    comment = Comment.objects.filter(revision__plan=plan, from_client=True).first()
    client.force_login(consultant)
    url = reverse("sharing:comment_reply", args=[plan.pk, comment.pk])
    response = client.post(url, {"body": "Thanks \x1b[2Jfor asking"}, follow=True)
    assert response.status_code == 200
    assert f"Reply not sent: {ESC_MESSAGE}" in html.unescape(response.content.decode())
    assert not Comment.objects.filter(reply_to=comment).exists()


def test_a_client_comment_with_a_bell_is_refused_next_to_the_field(client, demo):
    from planner.sharing.models import Comment, ShareLink

    plan = demo[0]
    link = ShareLink.objects.filter(plan=plan, revoked_at__isnull=True).latest("pk")
    comments = Comment.objects.count()
    response = client.post(
        reverse("sharing:public_comment", args=[link.token]),
        {"section": "tco", "author_name": "Sanne\x07", "body": "Looks good.\nOne question."},
    )
    assert response.status_code == 400
    # The share page's own comment box: the error sits right under the name input.
    shown = re.search(
        r'id="c-tco-name"[^>]*>\s*<small class="error">(.*?)</small>',
        response.content.decode(),
    )
    assert shown and html.unescape(shown.group(1)) == BEL_MESSAGE
    assert Comment.objects.count() == comments


def test_a_field_a_form_adds_after_it_is_built_gets_the_rule_too():
    """The traffic-log form adds its column fields in ``__init__`` after the rules were put
    on the declared ones; they are checked before cleaning."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from planner.measured.forms import TrafficLogForm

    form = TrafficLogForm(
        data={"mapping": "custom", "log_format": "csv", "col_timestamp": "ts\x07"},
        files={"file": SimpleUploadedFile("log.csv", b"ts,in,out\n")},
    )
    assert not form.is_valid()
    assert form.errors["col_timestamp"] == [BEL_MESSAGE]


def test_staff_editing_the_catalog_in_the_admin_get_the_same_rule(client, demo):
    from django.contrib.auth.models import User

    from catalog.models import Accelerator

    staff = User.objects.create_superuser("catalog-staff", "staff@example.com", "x" * 16)
    client.force_login(staff)
    accelerator = Accelerator.objects.order_by("pk").first()
    url = reverse("admin:catalog_accelerator_change", args=[accelerator.pk])
    form = _edit_form(client, url, lambda f: f.attrs.get("id") == "accelerator_form")
    response = client.post(url, form.data | {"name": "H100\x1b[0m"})
    assert response.status_code == 200  # the admin shows its form again with the error
    assert ESC_MESSAGE in html.unescape(response.content.decode())
    name = accelerator.name
    accelerator.refresh_from_db()
    assert accelerator.name == name
