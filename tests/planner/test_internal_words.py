"""A consultant's pages cite the consultancy's method and the public sources by name (the NEC
continuous-load rule, Epoch AI, the Uptime Institute survey), never a code path, an internal
reference code or a raw field name: one test renders every consultant page of the demo plan,
signed in as the demo consultant, and reads its visible text."""

import re

import pytest
from django.urls import reverse

from planner.facility.models import Site
from sourcing.models import PurchaseOrder
from tests.sharing.test_plain_words import visible_text

pytestmark = pytest.mark.django_db

INTERNAL = {
    "a research-note code": re.compile(r"\bref [A-F]\d"),
    "a source file name": re.compile(r"\.py\b"),
    "the guide's working name": re.compile(r"seed guide", re.IGNORECASE),
    "a schema version": re.compile(r"schema v\d", re.IGNORECASE),
    "an inputs hash": re.compile(r"inputs hash", re.IGNORECASE),
    "a raw snake_case key": re.compile(r"(?<![\w:/.@-])[a-z]+_[a-z_]+\b"),
    "a category slug in a label": re.compile(
        r"\b[Mm]arkup %? ?on (?:nic|optic|pdu|cable|rack|storage|switch|spares|accelerator"
        r"|server)\b|\b(?:nic|optic|pdu|cable)/(?:nic|optic|pdu|cable)\b"
    ),
}
# Genuine snake_case words a consultant reads and types as they are: the serving stack's metric
# and flag names (``vllm:kv_cache_usage_perc``, ``max_num_seqs``), the load-test tools' own
# names (vLLM's ``benchmark_serving`` script, GenAI-Perf's and AIPerf's ``profile_export_*.json``)
# and the column names a usage export must have (``prompt_tokens``, ``completion_tokens``).
ALLOWED = re.compile(
    r"vllm:[a-z_:]+|\b(?:num_[a-z_]+|gpu_memory_utilization|max_num_seqs|max_model_len"
    r"|kv_cache_[a-z_]+|[a-z_]+_seconds(?:_bucket)?|[a-z_]+_total|benchmark_serving"
    r"|profile_export_(?:genai_perf|aiperf)\.json|prompt_tokens|completion_tokens)\b"
)
URL = re.compile(r"https?://\S+")


def internal_words(text: str) -> list[str]:
    text = ALLOWED.sub(" ", URL.sub(" ", re.sub(r"\s+", " ", text)))
    found = []
    for what, pattern in INTERNAL.items():
        for m in pattern.finditer(text):
            found.append(f"{what}: …{text[max(0, m.start() - 60) : m.end() + 30]}…")
    return found


def _consultant_pages(plan) -> dict[str, str]:
    p = plan.pk
    pages = {
        "overview": reverse("plan_detail", args=[p]),
        "operations": reverse("operations", args=[p]),
        "sites": reverse("facility:site_list", args=[p]),
        "placement": reverse("facility:placement", args=[p]),
        "TCO": reverse("facility:tco", args=[p]),
        "BOM": reverse("sourcing:bom", args=[p]),
        "sourcing settings": reverse("sourcing:settings", args=[p]),
        "landed cost": reverse("sourcing:landed_cost", args=[p]),
        "timeline": reverse("sourcing:timeline", args=[p]),
        "quote": reverse("sourcing:quote", args=[p]),
        "orders": reverse("sourcing:orders", args=[p]),
        "history": reverse("sourcing:history", args=[p]),
        "review": reverse("sharing:review", args=[p]),
        "checklist": reverse("sharing:checklist", args=[p]),
    }
    for workload in plan.workloads.all():
        w = workload.pk
        pages[f"sizing {workload.name}"] = reverse("workload_sizing", args=[p, w])
        pages[f"measurements {workload.name}"] = reverse("measured:measurements", args=[p, w])
        pages[f"logs {workload.name}"] = reverse("measured:logs", args=[p, w])
    for site in Site.objects.filter(plan=plan):
        pages[f"site {site.name}"] = reverse("facility:site_detail", args=[p, site.pk])
    for order in PurchaseOrder.objects.filter(plan=plan):
        pages[f"order {order.reference}"] = reverse("sourcing:order_detail", args=[p, order.pk])
    for revision in plan.revisions.all():
        pages[f"revision {revision.number}"] = reverse(
            "sharing:revision", args=[p, revision.number]
        )
    return pages


def test_no_consultant_page_shows_a_code_path_a_reference_code_or_a_raw_key(client, demo):
    plan, consultant, _ = demo  # the session's demo plan (tests/conftest.py)
    client.force_login(consultant)
    pages = _consultant_pages(plan)
    assert any(name.startswith("site ") for name in pages)
    assert any(name.startswith("revision ") for name in pages)
    found = []
    for name, url in pages.items():
        response = client.get(url)
        assert response.status_code == 200, (name, response.status_code)
        found += [
            f"{name}: {hit}" for hit in internal_words(visible_text(response.content.decode()))
        ]
    assert not found, "\n".join(found)
