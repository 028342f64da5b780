"""Catalog pages as a consultant sees them."""

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from catalog.kinds import KINDS
from catalog.models import CatalogImport, CloudOffering, Part


@pytest.fixture
def signed_in(client, consultant_a, catalog):
    client.force_login(consultant_a)
    return client


@pytest.mark.parametrize("key", list(KINDS))
def test_every_list_shows_all_rows_with_links(signed_in, key):
    kind = KINDS[key]
    response = signed_in.get(reverse("catalog:list", args=[key]))

    assert response.status_code == 200
    content = response.content.decode()
    count = kind.model.objects.count()
    assert f'data-testid="row-count">{count} of {count}<' in content
    first = kind.model.objects.first()
    lookup = getattr(first, kind.lookup)
    assert reverse("catalog:detail", args=[key, lookup]) in content


def test_filters_narrow_the_list_and_htmx_gets_only_the_results(signed_in):
    url = reverse("catalog:list", args=["accelerators"])

    full = signed_in.get(url, {"vendor": "AMD", "min_memory_gb": "200"})
    partial = signed_in.get(
        url, {"vendor": "AMD", "min_memory_gb": "200"}, headers={"HX-Request": "true"}
    )

    assert "<html" in full.content.decode()
    content = partial.content.decode()
    assert "<html" not in content and 'id="results"' in content
    assert "MI325X" in content and "MI355X" in content
    assert "MI300X" not in content  # 192 GB is under the 200 GB filter
    assert "H100" not in content


def test_search_is_case_insensitive_over_several_fields(signed_in):
    response = signed_in.get(reverse("catalog:list", args=["models"]), {"q": "MLA"})
    content = response.content.decode()
    assert "DeepSeek-V3" in content and "Llama 3.1 8B" not in content


def test_bad_filter_value_is_explained_and_kept(signed_in):
    response = signed_in.get(
        reverse("catalog:list", args=["accelerators"]), {"min_memory_gb": "lots", "q": "H1"}
    )
    content = response.content.decode()
    assert response.status_code == 200
    assert "Enter a number." in content
    assert 'value="lots"' in content and 'value="H1"' in content


def test_sorting_by_a_column(signed_in):
    response = signed_in.get(
        reverse("catalog:list", args=["accelerators"]), {"sort": "-memory_bandwidth_tbps"}
    )
    content = response.content.decode()
    # MI355X (8 TB/s) comes before the L4 (0.3 TB/s) when sorted by bandwidth, descending.
    assert content.index("MI355X") < content.index(">L4<")
    ignored = signed_in.get(reverse("catalog:list", args=["accelerators"]), {"sort": "notes"})
    assert ignored.status_code == 200


def test_export_follows_the_filters(signed_in):
    response = signed_in.get(
        reverse("catalog:export", args=["cloud"]), {"provider": "AWS", "price_model": "spot"}
    )

    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    expected = CloudOffering.objects.filter(provider="AWS", price_model="spot").count()
    assert len(rows) == expected > 0
    assert list(rows[0]) == list(KINDS["cloud"].csv_columns)


def test_accelerator_detail_shows_source_servers_and_prices(signed_in):
    response = signed_in.get(reverse("catalog:detail", args=["accelerators", "h100-sxm"]))
    content = response.content.decode()
    assert response.status_code == 200
    assert "ml-engineering" in content  # the row's source
    assert "DGX H100" in content
    assert "a3-highgpu-8g" in content
    assert "USD per accelerator-hour" in content


def test_cloud_offering_detail_has_price_history(signed_in):
    offering = CloudOffering.objects.get(instance_type="a3-highgpu-8g", price_model="on_demand")
    content = signed_in.get(reverse("catalog:detail", args=["cloud", offering.pk])).content
    assert b"Price history" in content and b"88.49" in content


@pytest.mark.parametrize(
    "url",
    [
        "/catalog/nonsense/",
        "/catalog/accelerators/no-such-chip/",
        "/catalog/cloud/not-a-number/",
        "/catalog/cloud/999999/",
    ],
)
def test_unknown_items_are_404(signed_in, url):
    assert signed_in.get(url).status_code == 404


def test_compare_four_accelerators_with_chart(signed_in):
    response = signed_in.get(
        reverse("catalog:compare"),
        {"a": ["h100-sxm", "h200-sxm", "mi300x", "b200"], "precision": "fp8"},
    )

    content = response.content.decode()
    assert response.status_code == 200
    for name in ("H100 SXM", "H200 SXM", "MI300X", "B200"):
        assert name in content
    figure = json.loads(response.context["figure_json"])
    trace = figure["data"][0]
    assert trace["x"] == [1979, 1979, 2614.9, 4500]
    assert trace["marker"]["size"] == [80, 141, 192, 180]
    # BF16 ridge point of the H100: 989 TFLOPS / 3.35 TB/s = 295 FLOP per byte.
    assert "295" in content


@pytest.mark.parametrize(
    ("picked", "message"),
    [
        (["h100-sxm"], "Pick between 2 and 4 accelerators (1 picked)."),
        (["h100-sxm", "h200-sxm", "mi300x", "b200", "l4"], "(5 picked)"),
        (["h100-sxm", "made-up"], "Select a valid choice."),
    ],
)
def test_compare_rejects_bad_selections_with_a_message(signed_in, picked, message):
    response = signed_in.get(reverse("catalog:compare"), {"a": picked})
    assert response.status_code == 200
    assert message in response.content.decode()
    assert "figure_json" not in response.context


def _upload(client, kind: str, text: str, name: str = "parts.csv"):
    upload = SimpleUploadedFile(name, text.encode(), content_type="text/csv")
    return client.post(reverse("catalog:import"), {"kind": kind, "file": upload})


PARTS_HEADER = ",".join(KINDS["parts"].csv_columns)


def test_only_staff_can_import(client, consultant_a, catalog):
    client.force_login(consultant_a)
    assert client.get(reverse("catalog:import")).status_code == 403
    response = _upload(client, "parts", PARTS_HEADER + "\nx,nic,,X,,,,,,,,,,,src\n")
    assert response.status_code == 403
    assert not Part.objects.filter(slug="x").exists()


def test_staff_import_runs_the_task_and_shows_the_outcome(
    client, staff_a, catalog, django_capture_on_commit_callbacks
):
    client.force_login(staff_a)

    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(
            client, "parts", PARTS_HEADER + "\nnew-nic,nic,,New NIC,,,,,,,,99,,,src\n"
        )

    job = CatalogImport.objects.get()
    assert response.status_code == 302 and response.url == f"/catalog/import/{job.pk}/"
    assert job.status == "succeeded" and job.created == 1
    assert Part.objects.filter(slug="new-nic").exists()
    status = client.get(reverse("catalog:import_status", args=[job.pk]))
    assert status.status_code == 286  # htmx stops polling once finished
    assert "Imported" in status.content.decode()


def test_rejected_import_lists_line_numbers_and_saves_nothing(
    client, staff_a, catalog, django_capture_on_commit_callbacks
):
    client.force_login(staff_a)
    before = Part.objects.count()

    with django_capture_on_commit_callbacks(execute=True):
        _upload(
            client,
            "parts",
            PARTS_HEADER
            + "\nok-one,nic,,Fine,,,,,,,,,,,src\nbad-one,spaceship,,Bad,,,,,,,,,,,src\n",
        )

    job = CatalogImport.objects.get()
    assert job.status == "failed"
    assert job.errors == [
        {
            "line": 3,
            "message": "category: Select a valid choice. spaceship is not one of the "
            "available choices.",
        }
    ]
    assert Part.objects.count() == before
    content = client.get(reverse("catalog:import_detail", args=[job.pk])).content.decode()
    assert "Rejected" in content and "spaceship" in content


@pytest.mark.parametrize(
    ("name", "payload", "message"),
    [
        ("prices.xlsx", b"a,b", "Upload a .csv file."),
        ("latin1.csv", "slug,name\ncaf\xe9,x\n".encode("latin-1"), "not UTF-8"),
    ],
)
def test_unreadable_uploads_get_a_message_next_to_the_field(
    client, staff_a, catalog, name, payload, message
):
    client.force_login(staff_a)
    upload = SimpleUploadedFile(name, payload, content_type="text/csv")
    response = client.post(reverse("catalog:import"), {"kind": "parts", "file": upload})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not CatalogImport.objects.exists()


def test_home_shows_catalog_counts(signed_in):
    content = signed_in.get("/").content.decode()
    assert "Accelerators" in content and ">26<" in content
