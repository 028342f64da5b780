"""Reads of tenant data. Every query for organisation-owned rows goes through here."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet

from planner.models import ApiToken, Client, Membership, Organisation, Plan, Workload


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


def memberships_of_user(*, user: AbstractBaseUser) -> QuerySet[Membership]:
    """Every organisation the user belongs to (for the switcher)."""
    return Membership.objects.filter(user=user).select_related("organisation")


def client_list(*, organisation: Organisation) -> QuerySet[Client]:
    return Client.objects.filter(organisation=organisation)


def plan_list(*, organisation: Organisation) -> QuerySet[Plan]:
    return (
        Plan.objects.filter(organisation=organisation)
        .select_related("client")
        .annotate(workload_count=Count("workloads"))
    )


def plans_with_client() -> QuerySet[Plan]:
    """Plans with their client in the same query (every plan page's header names it).

    Not scoped: for ``planner.tenancy.org_object_or_404``, which adds the organisation."""
    return Plan.objects.select_related("client")


def workload_list(*, plan: Plan) -> QuerySet[Workload]:
    return Workload.objects.filter(plan=plan).select_related(
        "model", "chosen_accelerator", "chosen_server"
    )


def workloads_with_choices() -> QuerySet[Workload]:
    """Workloads with their plan, client, model and chosen configuration in one query.

    Not scoped: for ``planner.tenancy.org_object_or_404``, which adds the organisation."""
    return Workload.objects.select_related(
        "plan", "plan__client", "model", "chosen_accelerator", "chosen_server"
    )


def api_token_list(*, organisation: Organisation) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(organisation=organisation).select_related("created_by")
