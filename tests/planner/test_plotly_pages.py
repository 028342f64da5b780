"""plotly.js (4.8 MB) loads only on pages that draw charts."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from tests.planner.test_sizing_views import plan as plan  # noqa: F401  (fixture)
from tests.planner.test_sizing_views import workload as workload  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

PLOTLY = re.compile(r'<script[^>]+src="[^"]*plotly[^"]*\.js"')
CHART = 'data-plotly-figure="'


def test_plotly_loads_only_where_a_chart_is_drawn(client, consultant_a, workload):  # noqa: F811
    client.force_login(consultant_a)
    plan_id = workload.plan_id
    without = {
        "plans": reverse("plan_list"),
        "plan overview": reverse("plan_detail", args=[plan_id]),
        "clients": reverse("client_list"),
        "sites": reverse("facility:site_list", args=[plan_id]),
        "catalog": reverse("catalog:list", args=["accelerators"]),
        "operations": reverse("operations", args=[plan_id]),
        "compare, nothing picked yet": reverse("catalog:compare"),
    }
    for name, url in without.items():
        response = client.get(url)
        assert response.status_code == 200, name
        content = response.content.decode()
        assert CHART not in content and not PLOTLY.search(content), name

    sizing = client.get(reverse("workload_sizing", args=[plan_id, workload.pk])).content.decode()
    assert CHART in sizing and len(PLOTLY.findall(sizing)) == 1
    picked = {"a": ["h100-sxm", "b200"], "precision": "bf16"}
    compare = client.get(reverse("catalog:compare"), picked).content.decode()
    assert CHART in compare and len(PLOTLY.findall(compare)) == 1


def test_only_templates_that_draw_a_chart_include_plotly():
    root = Path(settings.BASE_DIR) / "templates"
    including = set()
    for path in root.rglob("*.html"):
        source = path.read_text()
        name = str(path.relative_to(root))
        if "includes/plotly.html" in source:
            including.add(name)
            assert CHART in source, f"{name} loads plotly.js but draws no chart"
        elif CHART in source:
            raise AssertionError(f"{name} draws a chart without loading plotly.js")
    assert "base.html" not in including and "planner/plan_detail.html" not in including
    assert "planner/workload_sizing.html" in including
