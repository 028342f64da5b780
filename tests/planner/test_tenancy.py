"""Every organisation sees only its own data: one test over every URL that takes an id,
and a guard that fails when a new URL is added without being classified here."""

from datetime import timedelta

import pytest
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from catalog.models import CatalogImport, ModelArchitecture
from planner.facility.models import Site, TcoRun
from planner.measured.models import FleetNotice
from planner.models import Client, Invitation, Membership, Plan, Workload


# URL names whose views read organisation-owned rows by id: each must 404 across tenants.
def _measured_url(name: str, extra: tuple):
    def url(objs):
        return reverse(f"measured:{name}", args=[objs["plan_b"].pk, objs["workload_b"].pk, *extra])

    return url


TENANT_OBJECT_URLS = {
    "client_edit": lambda objs: reverse("client_edit", args=[objs["client_b"].pk]),
    "plan_detail": lambda objs: reverse("plan_detail", args=[objs["plan_b"].pk]),
    "plan_edit": lambda objs: reverse("plan_edit", args=[objs["plan_b"].pk]),
    "plan_export": lambda objs: reverse("plan_export", args=[objs["plan_b"].pk]),
    "workload_add": lambda objs: reverse("workload_add", args=[objs["plan_b"].pk]),
    "workload_traffic_preview": lambda objs: reverse(
        "workload_traffic_preview", args=[objs["plan_b"].pk]
    ),
    "workload_sizing": lambda objs: reverse(
        "workload_sizing", args=[objs["plan_b"].pk, objs["workload_b"].pk]
    ),
    "workload_delete": lambda objs: reverse(
        "workload_delete", args=[objs["plan_b"].pk, objs["workload_b"].pk]
    ),
    "workload_choose": lambda objs: reverse(
        "workload_choose", args=[objs["plan_b"].pk, objs["workload_b"].pk]
    ),
    "candidate_detail": lambda objs: reverse(
        "candidate_detail", args=[objs["plan_b"].pk, objs["workload_b"].pk, "h100-sxm|fp8|1"]
    ),
    "candidate_second_opinion": lambda objs: reverse(
        "candidate_second_opinion",
        args=[objs["plan_b"].pk, objs["workload_b"].pk, "h100-sxm|fp8|1"],
    ),
    # planner.measured: B's workload 404s before its sweep or log is looked up (by pk 1).
    **{
        f"measured:{name}": _measured_url(name, extra)
        for name, extra in (
            ("measurements", ()),
            ("sweep_detail", (1,)),
            ("sweep_correction", (1,)),
            ("sweep_delete", (1,)),
            ("logs", ()),
            ("log_detail", (1,)),
            ("sweep_import", (1,)),
        )
    },  # fmt: skip
    "measured:fleet_notice_dismiss": lambda objs: reverse(
        "measured:fleet_notice_dismiss", args=[objs["plan_b"].pk, objs["fleet_notice_b"].pk]
    ),
    "member_edit": lambda objs: reverse("member_edit", args=[objs["membership_b"].pk]),
    "invitation_revoke": lambda objs: reverse("invitation_revoke", args=[objs["invitation_b"].pk]),
    "catalog:import_detail": lambda objs: reverse(
        "catalog:import_detail", args=[objs["import_b"].pk]
    ),
    "catalog:import_status": lambda objs: reverse(
        "catalog:import_status", args=[objs["import_b"].pk]
    ),
    "catalog:import_retry": lambda objs: reverse(
        "catalog:import_retry", args=[objs["import_b"].pk]
    ),
    "facility:site_list": lambda objs: reverse("facility:site_list", args=[objs["plan_b"].pk]),
    "facility:site_create": lambda objs: reverse("facility:site_create", args=[objs["plan_b"].pk]),
    "facility:site_detail": lambda objs: reverse(
        "facility:site_detail", args=[objs["plan_b"].pk, objs["site_b"].pk]
    ),
    "facility:site_delete": lambda objs: reverse(
        "facility:site_delete", args=[objs["plan_b"].pk, objs["site_b"].pk]
    ),
    "facility:site_split": lambda objs: reverse(
        "facility:site_split", args=[objs["plan_b"].pk, objs["workload_b"].pk]
    ),
    "facility:placement": lambda objs: reverse("facility:placement", args=[objs["plan_b"].pk]),
    "plan_recompute": lambda objs: reverse("plan_recompute", args=[objs["plan_b"].pk, "bom"]),
    "facility:tco": lambda objs: reverse("facility:tco", args=[objs["plan_b"].pk]),
    "facility:tco_run": lambda objs: reverse("facility:tco_run", args=[objs["plan_b"].pk]),
    "facility:tco_status": lambda objs: reverse(
        "facility:tco_status", args=[objs["plan_b"].pk, objs["tco_run_b"].pk]
    ),
    **{
        f"sourcing:{name}": (
            lambda n: lambda objs: reverse(f"sourcing:{n}", args=[objs["plan_b"].pk])
        )(name)
        for name in (
            "bom",
            "bom_generate",
            "bom_line_add",
            "settings",
            "landed_cost",
            "timeline",
            "check",
            "orders",
            "history",
            "quote",
            "quote_fee_add",
            "measure_decision",
        )
    },  # fmt: skip
    "sourcing:quote_fee_delete": lambda objs: reverse(
        "sourcing:quote_fee_delete", args=[objs["plan_b"].pk, objs["fee_b"].pk]
    ),
    "sourcing:bom_line_edit": lambda objs: reverse(
        "sourcing:bom_line_edit", args=[objs["plan_b"].pk, objs["bom_line_b"].pk]
    ),
    "sourcing:bom_line_remove": lambda objs: reverse(
        "sourcing:bom_line_remove", args=[objs["plan_b"].pk, objs["bom_line_b"].pk]
    ),
    "sourcing:order_detail": lambda objs: reverse(
        "sourcing:order_detail", args=[objs["plan_b"].pk, objs["order_b"].pk]
    ),
    "sourcing:supplier_detail": lambda objs: reverse(
        "sourcing:supplier_detail", args=[objs["supplier_b"].pk]
    ),
    "sourcing:offer_create": lambda objs: reverse(
        "sourcing:offer_create", args=[objs["supplier_b"].pk]
    ),
    "sourcing:offer_edit": lambda objs: reverse("sourcing:offer_edit", args=[objs["offer_b"].pk]),
    "sourcing:offer_delete": lambda objs: reverse(
        "sourcing:offer_delete", args=[objs["offer_b"].pk]
    ),
    **{
        f"sharing:{name}": (
            lambda n: lambda objs: reverse(f"sharing:{n}", args=[objs["plan_b"].pk])
        )(name)
        for name in ("review", "publish", "compare", "link_create", "checklist")
    },  # fmt: skip
    "sharing:link_detail": lambda objs: reverse(
        "sharing:link_detail", args=[objs["plan_b"].pk, objs["share_link_b"].pk]
    ),
    "sharing:link_revoke": lambda objs: reverse(
        "sharing:link_revoke", args=[objs["plan_b"].pk, objs["share_link_b"].pk]
    ),
    "sharing:revision": lambda objs: reverse("sharing:revision", args=[objs["plan_b"].pk, 1]),
    "sharing:document": lambda objs: reverse(
        "sharing:document", args=[objs["plan_b"].pk, 1, "quote"]
    ),
    "sharing:document_status": lambda objs: reverse(
        "sharing:document_status", args=[objs["plan_b"].pk, 1, "report"]
    ),
    "operations": lambda objs: reverse("operations", args=[objs["plan_b"].pk]),
    "sharing:comment_reply": lambda objs: reverse(
        "sharing:comment_reply", args=[objs["plan_b"].pk, objs["comment_b"].pk]
    ),
    "sharing:reply_email_status": lambda objs: reverse(
        "sharing:reply_email_status", args=[objs["plan_b"].pk, objs["reply_b"].pk]
    ),
    "sharing:reply_email_resend": lambda objs: reverse(
        "sharing:reply_email_resend", args=[objs["plan_b"].pk, objs["reply_b"].pk]
    ),
    "sharing:revision_notify": lambda objs: reverse(
        "sharing:revision_notify", args=[objs["plan_b"].pk, objs["share_link_b"].pk]
    ),
    "sharing:document_preview": lambda objs: reverse(
        "sharing:document_preview", args=[objs["plan_b"].pk, 1, "quote"]
    ),
}
# Share-link pages are public by design: they take an unguessable token, not an id, and show
# only the link's own plan (tests/sharing/test_share_links.py checks wrong, expired and revoked
# tokens, the rate limit and that no other plan is reachable).
PUBLIC_TOKEN_URLS = {
    "sharing:public",
    "sharing:public_comment",
    "sharing:public_decision",
    "sharing:public_document",
    "sharing:public_document_status",
    "sharing:contact_forget",  # its own secret: tests/sharing/test_conversations.py
    "invitation_accept",  # tests/planner/test_invitations.py
}
# The plan API's operations on an organisation's rows: tests/api checks each answers 404 for
# another organisation's ids (and 401 without a token, 403 for a viewer's writes).
API_TENANT_URLS = {
    "api:measure_decision_list",
    "api:measure_decision_put",
    "api:bom",
    "api:bom_generate",
    "api:candidates",
    "api:choose",
    "api:deployment",
    "api:document",
    "api:facility_checks",
    "api:landed_cost",
    "api:placement",
    "api:plan_create",
    "api:plan_delete",
    "api:plan_export_endpoint",
    "api:plan_import_endpoint",
    "api:plan_list",
    "api:plan_read",
    "api:plan_update",
    "api:revision",
    "api:revision_list",
    "api:revision_publish",
    "api:share_link_create",
    "api:share_link_revoke",
    "api:site_create",
    "api:site_delete",
    "api:site_list",
    "api:site_read",
    "api:site_update",
    "api:tco_run",
    "api:tco_run_start",
    "api:timeline",
    "api:workload_create",
    "api:workload_delete",
    "api:workload_list",
    "api:workload_read",
    "api:workload_update",
    # planner/api/settings.py (tests/api/test_settings.py)
    "api:placement_choose",
    "api:placement_settings_read",
    "api:placement_settings_update",
    "api:quote_fee_create",
    "api:quote_fee_list",
    "api:quote_fee_read",
    "api:quote_fee_remove",
    "api:quote_fee_update",
    "api:quote_settings_read",
    "api:quote_settings_update",
    "api:site_split_clear",
    "api:site_split_read",
    "api:site_split_update",
    "api:tco_settings_read",
    "api:tco_settings_update",
    # tests/planner/test_client_vat_recovery.py
    "api:client_create",
    "api:client_list",
    "api:client_read",
    "api:client_update",
    # tests/api/test_sourcing.py
    "api:bom_line_add",
    "api:bom_line_read",
    "api:bom_line_remove",
    "api:bom_line_update",
    "api:offer_create",
    "api:offer_delete",
    "api:offer_list",
    "api:offer_read",
    "api:offer_update",
    "api:order_create",
    "api:order_list",
    "api:order_read",
    "api:order_update",
    "api:supplier_create",
    "api:supplier_delete",
    "api:supplier_list",
    "api:supplier_read",
    "api:supplier_update",
}
# URL names that hold no organisation-owned object (shared catalog, auth, the current
# organisation's own pages, admin); listed so that a new URL cannot go unclassified.
NOT_TENANT_OBJECT_URLS = {
    "home",
    "organisation",
    "organisation_switch",
    "client_list",
    "api_tokens",
    "quote_terms",
    "serving_defaults",
    "calibration",
    "sourcing:suppliers",
    "sourcing:fx",
    "sourcing:tariffs",
    "api:api-root",
    "api:estimate_endpoint",
    "api:openapi-json",
    "plan_list",
    "plan_create",
    "plan_import",  # creates a plan in the current organisation only
    "catalog:index",
    "catalog:compare",
    "catalog:import",
    "catalog:list",
    "catalog:export",
    "catalog:detail",
    "login",
    "logout",
    "password_change",
    "password_change_done",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
}


def _url_names(resolver: URLResolver, namespace: str = "") -> set[str]:
    names = set()
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            if pattern.app_name == "admin":
                continue
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            names |= _url_names(pattern, inner)
        elif isinstance(pattern, URLPattern) and pattern.name:
            names.add(f"{namespace}{pattern.name}")
    return names


def test_every_url_is_classified_for_tenancy():
    names = _url_names(get_resolver())
    unclassified = (
        names
        - set(TENANT_OBJECT_URLS)
        - NOT_TENANT_OBJECT_URLS
        - PUBLIC_TOKEN_URLS
        - API_TENANT_URLS
    )
    assert not unclassified, f"classify these URLs in test_tenancy.py: {sorted(unclassified)}"


def _sourcing_objects_of_b(org_b, plan_b) -> dict:
    from datetime import date

    from sourcing.models import BomLine, Offer, PurchaseOrder, QuoteFee, Supplier

    supplier = Supplier.objects.create(organisation=org_b, name="Beta Supply", country="DE")
    return {
        "supplier_b": supplier,
        "offer_b": Offer.objects.create(
            supplier=supplier, service="installation", unit_price=100, currency="EUR",
            lead_time_days=1, quoted_on=date(2026, 1, 1), valid_until=date(2026, 12, 31),
            origin_country="DE",
        ),
        "bom_line_b": BomLine.objects.create(
            plan=plan_b, part_key="manual:x", category="other", description="X", quantity=1
        ),
        "order_b": PurchaseOrder.objects.create(
            plan=plan_b, supplier=supplier, reference="PO-001", destination_country="DE",
            charges_currency="EUR",
        ),
        "fee_b": QuoteFee.objects.create(
            plan=plan_b, kind="design", description="Design", quantity=1, unit="days",
            unit_price=100,
        ),
    }  # fmt: skip


def _sharing_objects_of_b(plan_b, owner_b) -> dict:
    from planner.sharing.models import Comment, PlanRevision, ReplyEmail, ShareLink

    revision = PlanRevision.objects.create(
        plan=plan_b, number=1, snapshot={"plan": {"name": plan_b.name}}, snapshot_sha256="0" * 64
    )
    link = ShareLink.objects.create(plan=plan_b, revision=revision, token="b" * 43)
    comment = Comment.objects.create(revision=revision, link=link, author_name="B", body="Hi")
    reply = Comment.objects.create(
        revision=revision, author_name="B", body="Yes", from_client=False, reply_to=comment
    )
    ReplyEmail.objects.create(reply=reply, site_url="http://b.example", status="failed")
    return {"revision_b": revision, "share_link_b": link, "comment_b": comment, "reply_b": reply}


@pytest.fixture
def objects_of_b(org_b, owner_b, staff_b):
    client_b = Client.objects.create(organisation=org_b, name="Beta Bank")
    plan_b = Plan.objects.create(organisation=org_b, client=client_b, name="Beta chat")
    model = ModelArchitecture.objects.create(
        slug="tiny",
        name="Tiny",
        params_total_b=1,
        params_active_b=1,
        num_hidden_layers=2,
        hidden_size=64,
        num_attention_heads=4,
        num_key_value_heads=4,
        head_dim=16,
        vocab_size=100,
        max_position_embeddings=4096,
        attention_kind="MHA",
        source="test",
    )
    objects = {
        "client_b": client_b,
        "plan_b": plan_b,
        "workload_b": Workload.objects.create(
            plan=plan_b,
            name="B chat",
            model=model,
            input_tokens_mean=100,
            output_tokens_mean=100,
            ttft_ms=1000,
            tpot_ms=50,
            peak_concurrency=5,
        ),
        "site_b": Site.objects.create(plan=plan_b, name="Beta colo", site_it_capacity_kw=100),
        "tco_run_b": TcoRun.objects.create(plan=plan_b, input_hash="0" * 64, inputs={}),
        **_sourcing_objects_of_b(org_b, plan_b),
        **_sharing_objects_of_b(plan_b, owner_b),
        "membership_b": Membership.objects.get(user=owner_b),
        "invitation_b": Invitation.objects.create(
            organisation=org_b,
            email="new@example.com",
            token_sha256="b" * 64,
            expires_at=timezone.now() + timedelta(days=7),
        ),  # fmt: skip
        "import_b": CatalogImport.objects.create(
            organisation=org_b, created_by=staff_b, kind="parts", filename="b.csv", csv_text="x"
        ),
    }
    objects["fleet_notice_b"] = FleetNotice.objects.create(
        organisation=org_b, plan=plan_b, workload=objects["workload_b"], message="B's change"
    )
    return objects


@pytest.mark.parametrize("name", sorted(TENANT_OBJECT_URLS))
def test_other_organisations_objects_are_404(client, owner_a, objects_of_b, name):
    # The most privileged user of A (owner and staff) still cannot reach B's objects.
    owner_a.is_staff = True
    owner_a.save()
    client.force_login(owner_a)
    url = TENANT_OBJECT_URLS[name](objects_of_b)

    codes = (
        client.get(url).status_code,
        client.post(url, {"role": "viewer", "remove": "1", "candidate": "x"}).status_code,
    )
    # Each method is refused (405) or the object is not found (404): never shown or changed.
    assert set(codes) <= {404, 405} and 404 in codes, codes
    assert Membership.objects.filter(pk=objects_of_b["membership_b"].pk, role="owner").exists()
    assert Invitation.objects.get(pk=objects_of_b["invitation_b"].pk).is_pending


def test_switching_to_an_organisation_you_are_not_in_is_404(client, owner_a, org_b):
    client.force_login(owner_a)
    response = client.post(reverse("organisation_switch"), {"organisation": org_b.pk})
    assert response.status_code == 404


def test_import_lists_show_only_own_organisation(client, staff_a, objects_of_b):
    client.force_login(staff_a)
    for url in (reverse("catalog:import"), reverse("home")):
        assert b"b.csv" not in client.get(url).content


def test_organisation_page_lists_only_own_members(client, owner_a, consultant_a, owner_b):
    client.force_login(owner_a)
    content = client.get(reverse("organisation")).content.decode()
    assert "consultant_a@example.com" in content
    assert "owner_b" not in content


def test_signed_out_users_are_sent_to_login(client, objects_of_b):
    for url in ["/", "/organisation/", "/catalog/accelerators/", "/catalog/compare/"]:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith("/accounts/login/")


def test_user_without_organisation_gets_a_clear_403(client, db, django_user_model):
    user = django_user_model.objects.create_user("loner", password="pw-for-tests-1")
    client.force_login(user)
    response = client.get("/catalog/accelerators/")
    assert response.status_code == 403
    assert b"not in an organisation" in response.content


def test_a_site_of_b_is_404_inside_a_plan_of_a(client, owner_a, org_a, objects_of_b):
    # The site id is checked against the plan, not only the plan against the organisation.
    client_a = Client.objects.create(organisation=org_a, name="Alpha client")
    plan_a = Plan.objects.create(organisation=org_a, client=client_a, name="Alpha plan")
    client.force_login(owner_a)
    site_b, run_b = objects_of_b["site_b"], objects_of_b["tco_run_b"]
    assert (
        client.get(reverse("facility:site_detail", args=[plan_a.pk, site_b.pk])).status_code == 404
    )
    assert client.get(reverse("facility:tco_status", args=[plan_a.pk, run_b.pk])).status_code == 404
