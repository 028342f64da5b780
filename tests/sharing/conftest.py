"""Fixtures of the client-review tests: the demo plan (sized, with sites, TCO, BOM, orders,
and — from the sharing demo — revision 1, a link, a comment and an approval)."""

import io

import pytest


@pytest.fixture(autouse=True)
def _clean_cache_and_media(settings, tmp_path):
    from django.core.cache import cache

    from planner.sharing.body import memo_clear

    settings.MEDIA_ROOT = tmp_path / "media"
    cache.clear()
    memo_clear()
    yield
    cache.clear()
    memo_clear()


@pytest.fixture
def plan(demo):
    return demo[0]


@pytest.fixture
def consultant(demo):
    return demo[1]


@pytest.fixture
def signed_in(client, consultant):
    client.force_login(consultant)
    return client


def pdf_text(content: bytes) -> tuple[str, int, list[str]]:
    """(all text, page count, text per page) of a PDF, read back with pypdf."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(content))
    pages = [page.extract_text() or "" for page in reader.pages]
    return "\n".join(pages), len(pages), pages
