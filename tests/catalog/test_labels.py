"""Catalog pages speak in human labels ("TDP (W)", "On demand"), never in field names."""

import re

import pytest
from django.urls import reverse

from catalog.kinds import FIELD_LABELS, KINDS
from catalog.views import HIDDEN_DETAIL_FIELDS
from tests.sharing.test_plain_words import visible_text

FIELD_NAME = re.compile(r"(?<![\w/.:-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


@pytest.fixture
def signed_in(client, consultant_a, catalog):
    client.force_login(consultant_a)
    return client


def test_every_field_shown_on_a_detail_page_has_a_label():
    for kind in KINDS.values():
        for field in kind.model._meta.fields:
            if field.name not in HIDDEN_DETAIL_FIELDS:
                assert field.name in FIELD_LABELS, (kind.key, field.name)


@pytest.mark.parametrize("key", list(KINDS))
def test_list_and_detail_pages_show_labels_not_field_names(signed_in, consultant_a, key):
    kind = KINDS[key]
    pages = [signed_in.get(reverse("catalog:list", args=[key]))]
    for item in kind.model.objects.all()[:3]:
        pages.append(
            signed_in.get(reverse("catalog:detail", args=[key, getattr(item, kind.lookup)]))
        )
    for response in pages:
        assert response.status_code == 200
        # Sources and notes quote documents verbatim (config keys included): leave them out.
        html = re.sub(r'<aside class="provenance">.*?</aside>', "", response.content.decode(),
                      flags=re.S)  # fmt: skip
        html = re.sub(r'<td class="source">.*?</td>', "", html, flags=re.S)
        text = visible_text(html).replace(consultant_a.username, " ")
        assert FIELD_NAME.findall(text) == [], key


def test_accelerator_and_cloud_labels(signed_in):
    from catalog.models import Accelerator, CloudOffering

    gpu = Accelerator.objects.exclude(tdp_w=None).first()
    body = visible_text(
        signed_in.get(reverse("catalog:detail", args=["accelerators", gpu.slug])).content.decode()
    )
    assert "TDP (W)" in body and "Scale-up bandwidth (GB/s per direction)" in body
    on_demand = CloudOffering.objects.filter(price_model="on_demand").first()
    listing = signed_in.get(reverse("catalog:list", args=["cloud"])).content.decode()
    assert "On demand" in visible_text(listing) and ">on_demand<" not in listing
    assert '<option value="on_demand">On demand</option>' in listing  # the filter's options
    detail = signed_in.get(reverse("catalog:detail", args=["cloud", on_demand.pk]))
    assert "Price (USD per hour)" in visible_text(detail.content.decode())
