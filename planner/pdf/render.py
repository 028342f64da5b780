"""HTML to PDF: a template and a typed context in, bytes out (WeasyPrint, no network)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.template.loader import render_to_string

# WeasyPrint logs each rendering step and every CSS property it ignores; keep errors only.
for _name in ("weasyprint", "weasyprint.progress", "fontTools"):
    logging.getLogger(_name).setLevel(logging.ERROR)

from weasyprint import HTML  # noqa: E402

from planner.pdf.fetcher import BASE_URL, StaticOnlyFetcher  # noqa: E402


@dataclass(frozen=True)
class RenderedPdf:
    """PDF bytes and what the fetcher refused while rendering."""

    content: bytes
    refused_urls: tuple[str, ...]
    pages: int


def render_html(template: str, context: dict) -> str:
    """The document's HTML (also the debugging preview)."""
    return render_to_string(template, {**context, "pdf_base_url": BASE_URL})


def render_pdf(template: str, context: dict) -> RenderedPdf:
    """Render ``template`` with ``context`` to PDF bytes.

    Only the project's static files can be loaded (``StaticOnlyFetcher``); fonts come from
    the system through fontconfig (DejaVu).
    """
    return html_to_pdf(render_html(template, context))


def html_to_pdf(html: str) -> RenderedPdf:
    """PDF bytes of an HTML string, loading only the project's static files."""
    fetcher = StaticOnlyFetcher()
    document = HTML(string=html, base_url=BASE_URL, url_fetcher=fetcher).render()
    content = document.write_pdf()
    return RenderedPdf(content, tuple(fetcher.refused), len(document.pages))
