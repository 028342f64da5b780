"""The quote's markups, terms and fees in the Django admin: scoped to the staff member's own
organisations and read-only, like every other organisation's data (planner.admin_tenancy)."""

from decimal import Decimal

from django.contrib.auth.models import Permission, User
from django.urls import reverse

from planner.admin_tenancy import TenantAdmin
from planner.models import Client, Plan
from sourcing.models import FeeKind, FeeUnit, QuoteFee, QuoteSettings
from tests.conftest import make_member


def _plan(organisation, user, name):
    client = Client.objects.create(organisation=organisation, name=f"{name} client")
    return Plan.objects.create(organisation=organisation, client=client, name=name, created_by=user)


def _staff(organisation, username):
    user = make_member(organisation, username, "owner")
    user.is_staff = True
    user.save()
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=("view_quotesettings", "view_quotefee"))
    )
    return User.objects.get(pk=user.pk)  # fresh permission cache


def test_quote_models_are_tenant_admins():
    from django.contrib import admin

    assert isinstance(admin.site._registry[QuoteSettings], TenantAdmin)
    assert isinstance(admin.site._registry[QuoteFee], TenantAdmin)


def test_staff_see_only_their_own_organisations_quote_settings_and_fees(client, org_a, org_b):
    alice, bob = _staff(org_a, "alice"), _staff(org_b, "bob")
    own, theirs = _plan(org_a, alice, "Alpha rollout"), _plan(org_b, bob, "Beta rollout")
    QuoteSettings.objects.create(plan=own, markup_pct=Decimal("12.00"))
    their_settings = QuoteSettings.objects.create(plan=theirs, markup_pct=Decimal("37.00"))
    QuoteFee.objects.create(plan=own, kind=FeeKind.DESIGN, description="Alpha design days",
                            quantity=3, unit=FeeUnit.DAYS, unit_price=Decimal("1000.00"))  # fmt: skip
    their_fee = QuoteFee.objects.create(
        plan=theirs, kind=FeeKind.INSTALLATION, description="Beta secret install",
        quantity=2, unit=FeeUnit.DAYS, unit_price=Decimal("999.00"),
    )  # fmt: skip
    client.force_login(alice)

    fees = client.get(reverse("admin:sourcing_quotefee_changelist"))
    assert fees.status_code == 200
    assert "Alpha design days" in fees.content.decode()
    assert "Beta secret install" not in fees.content.decode()
    settings = client.get(reverse("admin:sourcing_quotesettings_changelist"))
    assert settings.status_code == 200
    assert [s.plan_id for s in settings.context["cl"].result_list] == [own.pk]

    for name, row in (("quotefee", their_fee), ("quotesettings", their_settings)):
        page = client.get(reverse(f"admin:sourcing_{name}_change", args=[row.pk]))
        assert page.status_code == 302  # "doesn't exist" for them, never shown
        posted = client.post(reverse(f"admin:sourcing_{name}_change", args=[row.pk]), {})
        assert posted.status_code == 403
    their_fee.refresh_from_db()
    assert their_fee.unit_price == Decimal("999.00")
