"""The Django admin shows staff only their own organisations' data, read-only, and no add page
answers 500. The demo consultancy (every kind of organisation data) is the other organisation."""

import pytest
from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission, User
from django.urls import reverse

from catalog.models import CatalogImport
from planner.admin_tenancy import TenantAdmin
from planner.models import Membership, Organisation
from planner.services import CATALOG_MAINTAINER_PERMISSIONS
from tests.conftest import make_member

SECRET_CSV = "slug,name\nsecret-gpu,Beta's unreleased accelerator\n"


@pytest.fixture
def other_org(demo):
    """The demo consultancy with its full plan, and an import of a CSV file of its own."""
    _, user, organisation = demo
    CatalogImport.objects.create(
        organisation=organisation, created_by=user, kind="accelerators",
        filename="beta-secret-prices.csv", csv_text=SECRET_CSV,
    )  # fmt: skip
    return organisation


def _maintainer(org_a, *, every_view_permission: bool) -> User:
    """A catalog maintainer of org A (as demo_setup makes them), optionally also granted
    view permission on every model: the admin must still scope by membership."""
    user = make_member(org_a, "maintainer_a", "owner")
    user.is_staff = True
    user.save()
    perms = Permission.objects.filter(
        content_type__app_label="catalog",
        codename__regex=rf"^({'|'.join(CATALOG_MAINTAINER_PERMISSIONS)})_",
    )
    user.user_permissions.add(*perms)
    if every_view_permission:
        user.user_permissions.add(*Permission.objects.filter(codename__startswith="view_"))
    return User.objects.get(pk=user.pk)  # fresh permission cache


def _tenant_admins():
    return [(m, a) for m, a in admin.site._registry.items() if isinstance(a, TenantAdmin)]


def _url(model, view, *args):
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def test_every_model_owned_by_an_organisation_is_a_tenant_admin():
    def owned(model, depth=0):
        if model is Organisation:
            return True
        if depth > 2:
            return False
        return any(
            f.many_to_one or f.one_to_one
            for f in model._meta.get_fields()
            if f.concrete and f.is_relation and f.related_model is not None
            and owned(f.related_model, depth + 1)
        )  # fmt: skip

    for model, model_admin in admin.site._registry.items():
        if owned(model):
            assert isinstance(model_admin, TenantAdmin), model


def test_a_catalog_maintainer_sees_only_their_own_organisations_imports(client, org_a, other_org):
    maintainer = _maintainer(org_a, every_view_permission=False)
    own = CatalogImport.objects.create(
        organisation=org_a, created_by=maintainer, kind="parts", filename="alpha-parts.csv",
        csv_text="slug\nalpha-part\n",
    )  # fmt: skip
    theirs = CatalogImport.objects.get(organisation=other_org)
    client.force_login(maintainer)

    listing = client.get(_url(CatalogImport, "changelist"))
    body = listing.content.decode()
    assert listing.status_code == 200
    assert "alpha-parts.csv" in body and "beta-secret-prices.csv" not in body
    assert "Demo Co" not in body  # nor the other organisation's name, even in a filter

    assert client.get(_url(CatalogImport, "change", own.pk)).status_code == 200
    page = client.get(_url(CatalogImport, "change", theirs.pk), follow=True)
    assert "secret-gpu" not in page.content.decode()
    assert "doesn’t exist" in page.content.decode()
    saved = client.post(_url(CatalogImport, "change", theirs.pk), {"filename": "mine.csv"})
    assert saved.status_code == 403
    theirs.refresh_from_db()
    assert theirs.filename == "beta-secret-prices.csv"
    assert not LogEntry.objects.exists()  # nothing was "saved", by anyone


def test_the_import_add_page_is_refused_not_a_500(client, org_a):
    client.force_login(_maintainer(org_a, every_view_permission=False))
    assert client.get(_url(CatalogImport, "add")).status_code == 403
    posted = client.post(_url(CatalogImport, "add"), {"filename": "x.csv", "kind": "parts"})
    assert posted.status_code == 403
    assert not CatalogImport.objects.exists()


def test_staff_with_every_view_permission_see_no_other_organisations_rows(client, org_a, other_org):
    client.force_login(_maintainer(org_a, every_view_permission=True))
    checked = 0
    for model, model_admin in _tenant_admins():
        listing = client.get(_url(model, "changelist"))
        assert listing.status_code == 200, model
        path = model_admin.organisation_path or "pk"
        value = other_org if model_admin.organisation_path else other_org.pk
        their_rows = model._default_manager.filter(**{path: value})
        listed = {row.pk for row in listing.context["cl"].result_list}
        assert not listed & set(their_rows.values_list("pk", flat=True)), model
        theirs = their_rows.order_by("pk").first()
        if theirs is None:
            continue
        checked += 1
        assert client.get(_url(model, "change", theirs.pk)).status_code == 302, model
        assert client.post(_url(model, "change", theirs.pk), {}).status_code == 403, model
        assert client.get(_url(model, "delete", theirs.pk)).status_code in {302, 403}, model
        assert client.get(_url(model, "add")).status_code == 403, model
    assert checked >= 10  # the demo populates most organisation models
    assert not LogEntry.objects.exists()


def test_staff_see_their_own_organisations_rows_read_only(client, other_org):
    demo_user = User.objects.get(username="demo")  # a staff member of the demo consultancy
    demo_user.user_permissions.add(*Permission.objects.filter(codename__startswith="view_"))
    client.force_login(User.objects.get(pk=demo_user.pk))
    for model, _ in _tenant_admins():
        listing = client.get(_url(model, "changelist"))
        assert listing.status_code == 200, model
        rows = listing.context["cl"].result_list
        if rows:
            page = client.get(_url(model, "change", rows[0].pk))
            assert page.status_code == 200, model
            assert 'name="_save"' not in page.content.decode(), model  # read-only


def test_no_admin_add_page_answers_500_even_for_a_superuser(client, org_a, other_org):
    root = User.objects.create_superuser("root", "root@example.com", "pw-for-tests-1")
    Membership.objects.filter(user=root).delete()
    client.force_login(root)
    for model in admin.site._registry:
        assert client.get(_url(model, "changelist")).status_code == 200, model
        assert client.get(_url(model, "add")).status_code in {200, 403}, model
        assert client.post(_url(model, "add"), {}).status_code in {200, 403}, model
