"""The README's worked example, step by step through the test client: a plan with two
workloads, sized, chosen, costed, published, and its quote downloaded."""

import pytest

from tests.api.conftest import Api


class Http:
    """What the README's script does with httpx: JSON in, JSON or bytes out."""

    def __init__(self, api: Api) -> None:
        self.api = api

    def get(self, path):
        return self.api.client.get(path, headers=self.api.headers)

    def post(self, path, json=None):
        return self.api.call("post", path.removeprefix("/api/v1"), json or {})


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def test_the_readme_example(api, catalog, django_capture_on_commit_callbacks):
    http = Http(api)
    # Steps as in README.md ("Scripting a plan"); the worker runs eagerly here.
    plan = http.post("/api/v1/plans", {"client_name": "Northwind", "name": "Assistant"}).json()
    base = f"/api/v1/plans/{plan['id']}"
    chat = {"input_tokens_mean": 1200, "output_tokens_mean": 350, "ttft_ms": 1000, "tpot_ms": 50}
    for name, model, peak in [("Chat", "llama-3.1-70b", 400), ("Search", "llama-3.1-8b", 200)]:
        body = chat | {"name": name, "model": model, "peak_concurrency": peak}
        workload = http.post(f"{base}/workloads", body).json()
        rows = http.get(f"{base}/workloads/{workload['id']}/candidates").json()
        best = next(r for r in rows if r["feasible"] and r["accelerator"] == "b200")
        chosen = http.post(f"{base}/workloads/{workload['id']}/choose", {"key": best["key"]})
        assert chosen.status_code == 200 and not chosen.json()["warning"], chosen.content
    with django_capture_on_commit_callbacks(execute=True):
        run = http.post(f"{base}/tco-runs").json()
    assert run.get("status") in ("pending", "succeeded"), run
    run = http.get(run["status_url"]).json()
    assert run["status"] == "succeeded" and run["results"]["options"]
    revision = http.post(
        f"{base}/revisions", {"note": "First quote", "with_open_items": True}
    ).json()
    assert revision["published"], revision
    with django_capture_on_commit_callbacks(execute=True):
        first = http.get(revision["documents"]["quote"])
    quote = first if first.status_code == 200 else http.get(revision["documents"]["quote"])
    assert quote.status_code == 200 and quote.content.startswith(b"%PDF")
