"""Reads of tenant data. Every query for organisation-owned rows goes through here."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet

from planner import sizing
from planner.computed import computed
from planner.engine.deployment import Deployment, estimate_server, servers_needed
from planner.engine.errors import CatalogGapError
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


def membership_get(*, organisation: Organisation, membership_id: int) -> Membership:
    """One membership of the organisation; raises Membership.DoesNotExist for any other."""
    return Membership.objects.select_related("user").get(
        organisation=organisation, pk=membership_id
    )


def memberships_of_user(*, user: AbstractBaseUser) -> QuerySet[Membership]:
    """Every organisation the user belongs to (for the switcher)."""
    return Membership.objects.filter(user=user).select_related("organisation")


def client_list(*, organisation: Organisation) -> QuerySet[Client]:
    return Client.objects.filter(organisation=organisation)


def client_get(*, organisation: Organisation, client_id: int) -> Client:
    """One client of the organisation; raises Client.DoesNotExist for any other."""
    return Client.objects.get(organisation=organisation, pk=client_id)


def plan_list(*, organisation: Organisation) -> QuerySet[Plan]:
    return (
        Plan.objects.filter(organisation=organisation)
        .select_related("client")
        .annotate(workload_count=Count("workloads"))
    )


def plan_get(*, organisation: Organisation, plan_id: int) -> Plan:
    """One plan of the organisation; raises Plan.DoesNotExist for any other."""
    return Plan.objects.select_related("client").get(organisation=organisation, pk=plan_id)


def workload_list(*, plan: Plan) -> QuerySet[Workload]:
    return Workload.objects.filter(plan=plan).select_related(
        "model", "chosen_accelerator", "chosen_server"
    )


def workload_get(*, organisation: Organisation, plan_id: int, workload_id: int) -> Workload:
    """One workload of one of the organisation's plans; DoesNotExist for any other."""
    return Workload.objects.select_related(
        "plan", "plan__client", "model", "chosen_accelerator", "chosen_server"
    ).get(plan__organisation=organisation, plan_id=plan_id, pk=workload_id)


def plan_deployments(*, plan: Plan) -> list[Deployment]:
    """The hardware of every workload of the plan whose chosen configuration still serves it.

    A choice that no longer meets the workload's inputs (``chosen_problem``) deploys nothing.

    Raises:
        CatalogGapError: A chosen configuration lacks a catalog figure its power needs; the
            message names the workload and what to do. Pages show it on the section.
    """
    return computed(("per_workload_deployments", plan.pk), lambda: _plan_deployments(plan))


def _plan_deployments(plan: Plan) -> list[Deployment]:
    deployments = []
    chosen = workload_list(plan=plan).filter(chosen_accelerator__isnull=False, chosen_problem="")
    for workload in chosen:
        accelerator = workload.chosen_accelerator
        server = workload.chosen_server
        per_server = (server.accelerators_per_server if server else None) or min(
            8, workload.chosen_accelerators or 8
        )
        try:
            power_kw, rack_units, assumptions = estimate_server(
                accelerators_per_server=per_server,
                accelerator_tdp_w=accelerator.tdp_w,
                platform_power_kw=server.max_power_kw if server else None,
                platform_rack_units=server.rack_units if server else None,
                accelerator_name=accelerator.name,
            )
        except CatalogGapError as gap:
            raise CatalogGapError(
                f"Workload '{workload.name}' uses {accelerator.name}: {gap} Choose a "
                "configuration with a published TDP or server platform on the workload's "
                "sizing page, or ask a catalog maintainer to add the figure.",
                item=gap.item,
                figure=gap.figure,
            ) from gap
        accelerators = workload.chosen_accelerators or 0
        deployments.append(
            Deployment(
                workload_id=workload.pk,
                workload_name=workload.name,
                accelerator_slug=accelerator.slug,
                accelerator_name=accelerator.name,
                precision=workload.chosen_precision or workload.precision,
                tensor_parallel=sizing.chosen_accelerators_per_replica(workload),
                replicas=workload.chosen_replicas or 0,
                accelerators=accelerators,
                accelerators_per_server=per_server,
                servers=workload.chosen_servers or servers_needed(accelerators, per_server),
                server_slug=server.slug if server else "",
                server_name=str(server) if server else f"{per_server}× {accelerator.name} server",
                server_power_kw=power_kw,
                server_rack_units=rack_units,
                accelerator_tdp_w=accelerator.tdp_w,
                assumptions=assumptions,
                prefill_tensor_parallel=workload.chosen_prefill_tensor_parallel
                if workload.chosen_serving == "disaggregated"
                else None,
                prefill_replicas=workload.chosen_prefill_replicas or 0
                if workload.chosen_serving == "disaggregated"
                else 0,
            )
        )
    return deployments


def api_token_list(*, organisation: Organisation) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(organisation=organisation).select_related("created_by")


def api_token_get(*, organisation: Organisation, token_id: int) -> ApiToken:
    """One token of the organisation; raises ApiToken.DoesNotExist for any other."""
    return ApiToken.objects.get(organisation=organisation, pk=token_id)
