"""Placement and the pooled deployment tell one story: the demo's two sites are parts of the
TCO's one owned option, never alternatives; the placement page, the headline option every
document leads with and the checklist's cost evidence all name that option."""

import re
from html import unescape

from django.urls import reverse

from planner.facility import services as fsvc
from planner.facility.models import Site
from planner.pdf.context import headline_option
from planner.sharing.checklist import chosen_tco_option
from planner.sharing.snapshot import plan_tco_and_placement


def test_each_site_of_the_deployment_shows_it_is_part_of_the_one_owned_option(plan, signed_in):
    tco, placement = plan_tco_and_placement(plan)
    owned = [  # the hybrid has a base per site too, but it is not the owned deployment
        o for o in tco["options"] if len(o.get("sites") or ()) > 1 and o["kind"] != "hybrid"
    ]
    assert len(owned) == 1, "the demo prices one owned option for its two sites"
    option = owned[0]
    site_keys = {p["key"] for p in option["sites"]}
    assert site_keys == {f"site-{s.pk}" for s in Site.objects.filter(plan=plan)
                         if f"site-{s.pk}" in site_keys} and len(site_keys) == 2  # fmt: skip

    page = signed_in.get(reverse("facility:placement", args=[plan.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    evaluation = page.context["evaluation"]
    rows = {o.key: o for o in evaluation.result.options}
    for part in option["sites"]:
        row_html = html[html.index(f'data-option="{part["key"]}"') :]
        row_html = row_html[: row_html.index("</tr>")]
        assert 'data-testid="deployment-badge"' in row_html
        note = unescape(re.search(r'data-testid="deployment-part">([^<]*)<', row_html).group(1))
        assert option["label"] in note  # the one option, named
        assert f"this site's share is {part['servers']} servers" in note
        # The same cost figure on every site of the deployment: the whole deployment's.
        cost = next(c for c in rows[part["key"]].criteria if c.criterion == "cost")
        costs = {c.score for k in site_keys for c in rows[k].criteria if c.criterion == "cost"}
        assert cost.score is not None and len(costs) == 1
    # Options that are not part of it carry no such note.
    others = [k for k in rows if k not in site_keys]
    assert others and not any(k in evaluation.deployment_parts for k in others)

    # The headline and the checklist take that option for the chosen site (Frankfurt).
    assert placement["chosen_key"] in site_keys
    assert headline_option(tco, placement).key == option["key"]
    chosen, sentence = chosen_tco_option({"tco": tco, "placement": placement})
    assert chosen["key"] == option["key"]
    share = next(p for p in option["sites"] if p["key"] == placement["chosen_key"])
    assert f"part of the one owned deployment {option['label']}" in sentence
    assert f"this site's share: {share['servers']} servers" in sentence


def test_no_deployment_parts_without_an_option_split_over_sites():
    assert fsvc.deployment_parts(None) == {}
    one_site = {"options": [{"key": "site-1", "label": "A", "sites": [{"key": "site-1"}]}]}
    assert fsvc.deployment_parts(one_site) == {}
