"""A stale edit reaches an API client as 409 in the one documented error shape."""

import json

from django.test import RequestFactory

from planner.api import api
from planner.versioning import StaleChange, StaleEditError


def test_a_stale_edit_is_a_409_with_the_fields_that_changed():
    request = RequestFactory().post("/api/v1/plans/1", content_type="application/json")
    error = StaleEditError(
        model="workload",
        pk=7,
        changes=[StaleChange(field="headroom_pct", label="Headroom (%)", theirs="30", yours="25")],
    )

    response = api.on_exception(request, error)

    assert response.status_code == 409
    body = json.loads(response.content)
    assert set(body) == {"errors"}
    assert body["errors"]["headroom_pct"] == ["Changed meanwhile to 30; yours 25."]
    assert "Headroom (%): now 30, yours 25" in body["errors"]["__all__"][0]


def test_a_conflict_found_only_at_the_database_says_to_save_again():
    request = RequestFactory().post("/api/v1/plans/1", content_type="application/json")

    response = api.on_exception(request, StaleEditError(model="plan", pk=1))

    assert response.status_code == 409
    assert "save again" in json.loads(response.content)["errors"]["__all__"][0]
