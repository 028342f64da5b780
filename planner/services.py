"""Writes to tenant data: organisations and memberships."""

from django.contrib.auth.models import Permission, User
from django.db import transaction
from django.utils import timezone

from planner.models import ApiToken, Client, Membership, Organisation, Plan, Role
from planner.models.tokens import token_digest


class MembershipError(ValueError):
    """A membership change that would leave the organisation in a bad state."""


def _owners_left(membership: Membership) -> int:
    return (
        Membership.objects.filter(organisation=membership.organisation, role=Role.OWNER)
        .exclude(pk=membership.pk)
        .count()
    )


def member_change_role(*, membership: Membership, role: str) -> Membership:
    """Change a member's role; the last owner cannot stop being one."""
    if membership.role == Role.OWNER and role != Role.OWNER and _owners_left(membership) == 0:
        raise MembershipError("The organisation needs at least one owner.")
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


def member_remove(*, membership: Membership) -> None:
    """Remove a member; the last owner cannot be removed."""
    if membership.role == Role.OWNER and _owners_left(membership) == 0:
        raise MembershipError("The organisation needs at least one owner.")
    membership.delete()


CATALOG_MAINTAINER_PERMISSIONS = ("add", "change", "view")


@transaction.atomic
def demo_setup(
    *, username: str, password: str, organisation_name: str
) -> tuple[User, Organisation, bool]:
    """Create (or leave as is) the demo organisation and its consultant. Idempotent.

    The demo consultant is an owner of the organisation and a catalog maintainer (staff
    with the catalog's add/change/view permissions), so every page of the app is visible.
    Returns the user, the organisation and whether the user was created now.
    """
    organisation, _ = Organisation.objects.get_or_create(
        slug="demo-consultancy", defaults={"name": organisation_name}
    )
    user, created = User.objects.get_or_create(
        username=username,
        defaults={"email": f"{username}@example.com", "first_name": "Dana", "last_name": "Demo"},
    )
    if created:
        user.set_password(password)
    user.is_staff = True
    user.save()
    catalog_permissions = Permission.objects.filter(
        content_type__app_label="catalog",
        codename__regex=rf"^({'|'.join(CATALOG_MAINTAINER_PERMISSIONS)})_",
    )
    user.user_permissions.add(*catalog_permissions)
    Membership.objects.get_or_create(
        organisation=organisation, user=user, defaults={"role": Role.OWNER}
    )
    return user, organisation, created


@transaction.atomic
def plan_save(*, plan: Plan, organisation: Organisation, user, new_client: str = "") -> Plan:
    """Save the plan (its stored version is checked), creating the named new client when
    there is one."""

    new_client = new_client.strip()
    if new_client:
        plan.client = Client.objects.create(organisation=organisation, name=new_client)
    plan.organisation = organisation
    if plan.pk is None:
        plan.created_by = user
    plan.save()
    return plan


def api_token_create(*, organisation: Organisation, user, name: str) -> tuple[ApiToken, str]:
    """A new API token for the organisation; the raw token is returned once, never stored."""
    raw = ApiToken.generate()
    token = ApiToken.objects.create(
        organisation=organisation,
        name=name.strip()[:100],
        digest=token_digest(raw),
        hint=raw[:8],
        created_by=user,
    )
    return token, raw


def api_token_revoke(*, token: ApiToken) -> None:
    """Revoke at once; a revoked token cannot be restored."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
