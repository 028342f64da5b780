"""One tenancy look-up and one viewer refusal for every page and API operation.

``planner.tenancy.org_object_or_404`` is the only way a view or an API operation fetches an
organisation's row by id, and ``planner.permissions.require_editor`` the only way it refuses a viewer. The walk
below fails when a module grows its own ``_x_or_404`` helper, its own viewer message or its
own role check; the view tests check that a viewer meets the same refusal everywhere.
(tests/planner/test_tenancy.py checks every URL for another organisation's ids.)
"""

import ast
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import Http404
from django.urls import reverse

from catalog.models import Accelerator
from planner.facility.models import Site
from planner.measured.models import LoadTestSweep
from planner.models import Client, Organisation, Plan
from planner.permissions import VIEWER_MESSAGE
from planner.sharing.models import ChecklistSignOff, Comment
from planner.tenancy import org_object_or_404, organisation_paths
from sourcing.models import PurchaseOrder, Supplier
from tests.factories import PlanFactory, SiteFactory, SupplierFactory, WorkloadFactory, member

PROJECT_PACKAGES = ("planner", "catalog", "sourcing")
TENANCY_MODULES = {"planner/tenancy.py", "planner/permissions.py"}
# URL words checked against a fixed list: not rows of an organisation, so not tenancy.
NOT_TENANCY_LOOKUPS = {
    "catalog/views.py:_kind_or_404",  # a catalog list's key ("accelerators")
    "planner/sharing/views.py:_kind_or_404",  # a document kind ("quote")
    "planner/sharing/views.py:_client_kind_or_404",  # a kind a share link may serve
}


def _modules():
    root = Path(settings.BASE_DIR)
    for package in PROJECT_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            yield str(path.relative_to(root)), ast.parse(path.read_text())


def _scoped_by_hand(node: ast.AST) -> bool:
    """``X.objects.get(organisation=…, pk=…)`` or ``….get(plan__organisation=…)``: a row by
    id scoped by hand, which the pages and the API fetch through org_object_or_404."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and any(
            k.arg and (k.arg == "organisation" or k.arg.endswith("__organisation"))
            for k in node.keywords
        )
    )


def _own_tenancy_rules() -> list[str]:
    """Places that look up, or refuse a viewer, other than through the one shared way."""
    found = []
    for where, tree in _modules():
        if where in TENANCY_MODULES:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.endswith("_or_404"):
                if f"{where}:{node.name}" not in NOT_TENANCY_LOOKUPS:
                    found.append(f"{where}:{node.lineno}: def {node.name} (a local look-up)")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if re.match(r"Viewers (can|cannot)\b", node.value):
                    found.append(f"{where}:{node.lineno}: {node.value!r} (a second message)")
            elif isinstance(node, ast.Attribute) and node.attr == "can_edit":
                owner = node.value
                if isinstance(owner, ast.Attribute) and owner.attr == "membership":
                    found.append(f"{where}:{node.lineno}: request.membership.can_edit (own check)")
            elif isinstance(node, ast.alias) and node.name == "get_object_or_404":
                found.append(f"{where}:{node.lineno}: get_object_or_404 (does not scope)")
            elif _scoped_by_hand(node):
                found.append(f"{where}:{node.lineno}: .get(organisation=…) (a look-up by hand)")
    return found


def test_views_use_the_one_lookup_and_the_one_refusal():
    assert _own_tenancy_rules() == []


# --- org_object_or_404 -------------------------------------------------------------------------


def test_the_route_to_the_organisation_comes_from_the_schema():
    assert organisation_paths(Plan) == ("organisation",)
    assert organisation_paths(Site) == ("plan__organisation",)
    assert organisation_paths(Comment) == ("revision__plan__organisation",)
    assert organisation_paths(LoadTestSweep) == ("organisation",)
    assert organisation_paths(Organisation) == ("",)
    # A purchase order reaches an organisation through its plan and through its supplier.
    assert set(organisation_paths(PurchaseOrder)) == {
        "plan__organisation",
        "supplier__organisation",
    }
    with pytest.raises(ImproperlyConfigured, match="not organisation data"):
        organisation_paths(Accelerator)  # the shared catalog belongs to no organisation


def test_another_organisations_row_reads_like_a_missing_one(org_a, org_b):
    plan_a, plan_b = PlanFactory(organisation=org_a), PlanFactory(organisation=org_b)
    site_b = SiteFactory(plan=plan_b)
    assert org_object_or_404(org_a, Plan, pk=plan_a.pk) == plan_a
    messages = []
    for lookup in ({"pk": plan_b.pk}, {"pk": plan_b.pk + plan_a.pk + 1000}):
        with pytest.raises(Http404) as refused:
            org_object_or_404(org_a, Plan, **lookup)
        messages.append(str(refused.value))
    assert messages == ["No such plan.", "No such plan."]
    # A child row is scoped by the organisation too, not only through the parent the view
    # passes: B's site is not found even when asked for by its own plan.
    with pytest.raises(Http404, match="No such site."):
        org_object_or_404(org_a, Site.objects.all(), plan=plan_b, pk=site_b.pk)
    assert org_object_or_404(org_b, Site, plan=plan_b, pk=site_b.pk) == site_b
    with pytest.raises(Http404):
        org_object_or_404(None, Plan, pk=plan_a.pk)  # no organisation: nothing is yours


def test_a_row_must_belong_to_the_organisation_along_every_route(org_a, org_b):
    plan_a = PlanFactory(organisation=org_a)
    supplier_b = SupplierFactory(organisation=org_b)
    order = PurchaseOrder.objects.create(
        plan=plan_a, supplier=supplier_b, reference="PO-1", destination_country="DE",
        charges_currency="EUR",
    )  # fmt: skip
    for organisation in (org_a, org_b):
        with pytest.raises(Http404):
            org_object_or_404(organisation, PurchaseOrder, pk=order.pk)


# --- require_editor: one refusal on every page ---------------------------------------------------


@pytest.fixture
def viewer_a(org_a):
    return member(org_a, "viewer_a", "viewer")


@pytest.fixture
def rows_of_a(org_a, catalog):
    workload = WorkloadFactory(plan=PlanFactory(organisation=org_a))
    return {
        "plan": workload.plan,
        "workload": workload,
        "site": SiteFactory(plan=workload.plan),
        "supplier": SupplierFactory(organisation=org_a, name="Alpha Supply"),
    }


# Write views whose viewers once met five different refusals: a flash message and a redirect
# (clients, checklist), a bare 403 text (operations, sizing, load tests, quote), a page's own
# message (sourcing), and the editor_required page.
VIEWER_WRITES = {
    "client_list": lambda r: (reverse("client_list"), {"name": "Gamma"}),
    "sharing:checklist": lambda r: (
        reverse("sharing:checklist", args=[r["plan"].pk]),
        {"item_key": "x", "name": "V"},
    ),
    "operations": lambda r: (reverse("operations", args=[r["plan"].pk]), {}),
    "workload_sizing": lambda r: (
        reverse("workload_sizing", args=[r["plan"].pk, r["workload"].pk]),
        {"name": "Renamed"},
    ),
    "measured:measurements": lambda r: (
        reverse("measured:measurements", args=[r["plan"].pk, r["workload"].pk]),
        {},
    ),
    "facility:site_detail": lambda r: (
        reverse("facility:site_detail", args=[r["plan"].pk, r["site"].pk]),
        {"name": "Renamed"},
    ),
    "sourcing:supplier_detail": lambda r: (
        reverse("sourcing:supplier_detail", args=[r["supplier"].pk]),
        {"name": "Renamed"},
    ),
    "sourcing:settings": lambda r: (reverse("sourcing:settings", args=[r["plan"].pk]), {}),
    "sourcing:quote": lambda r: (reverse("sourcing:quote", args=[r["plan"].pk]), {}),
    "plan_edit": lambda r: (reverse("plan_edit", args=[r["plan"].pk]), {"name": "Renamed"}),
}


# Pages only an editor opens at all (``editor_required``): their GET meets the refusal too.
EDITOR_ONLY_PAGES = {"plan_edit"}


@pytest.mark.parametrize("name", sorted(VIEWER_WRITES))
def test_a_viewer_meets_the_same_refusal_on_every_write(client, viewer_a, rows_of_a, name):
    client.force_login(viewer_a)
    url, data = VIEWER_WRITES[name](rows_of_a)
    if name in EDITOR_ONLY_PAGES:
        requests = [client.get(url)]
    else:
        assert client.get(url).status_code == 200  # a viewer reads the page
        requests = []
    # A form post and an htmx autosave alike.
    requests += [client.post(url, data), client.post(url, data, headers={"HX-Request": "true"})]
    for refused in requests:
        assert refused.status_code == 403
        assert VIEWER_MESSAGE in refused.content.decode()
    # Nothing was written.
    assert Client.objects.filter(name="Gamma").count() == 0
    assert not ChecklistSignOff.objects.exists()
    for row in rows_of_a.values():
        assert type(row).objects.get(pk=row.pk).name != "Renamed"
    assert Supplier.objects.get(pk=rows_of_a["supplier"].pk).name == "Alpha Supply"


def test_a_token_id_that_cannot_be_one_is_404_not_500(client, owner_a):
    # The token to revoke comes from a POST field, not from a URL converter: anything that is
    # not a plain id of ours (letters, a superscript digit, more than a database id holds)
    # reads like a missing token.
    client.force_login(owner_a)
    for token_id in ("abc", "²", "-1", "99999999999999999999", "4"):
        assert client.post(reverse("api_tokens"), {"revoke": token_id}).status_code == 404
