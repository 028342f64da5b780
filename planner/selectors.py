"""Reads of tenant data. Every query for organisation-owned rows goes through here."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from planner.models import Membership, Organisation


def membership_current(*, user: AbstractBaseUser, organisation_id: int | None) -> Membership | None:
    """The user's membership in the remembered organisation, else their first one."""
    memberships = Membership.objects.select_related("organisation").filter(user=user)
    if organisation_id is not None:
        chosen = memberships.filter(organisation_id=organisation_id).first()
        if chosen is not None:
            return chosen
    return memberships.order_by("created_at", "pk").first()


def membership_list(*, organisation: Organisation) -> QuerySet[Membership]:
    """Members of one organisation, owners first."""
    return (
        Membership.objects.filter(organisation=organisation)
        .select_related("user")
        .order_by("role", "user__username")
    )


def membership_get(*, organisation: Organisation, membership_id: int) -> Membership:
    """One membership of the organisation; raises Membership.DoesNotExist for any other."""
    return Membership.objects.select_related("user").get(
        organisation=organisation, pk=membership_id
    )


def memberships_of_user(*, user: AbstractBaseUser) -> QuerySet[Membership]:
    """Every organisation the user belongs to (for the switcher)."""
    return Membership.objects.filter(user=user).select_related("organisation")
