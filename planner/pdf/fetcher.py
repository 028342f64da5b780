"""WeasyPrint URL fetcher that serves only the project's own static files.

Anything else — http(s), file paths outside the static folders, data URLs — is refused, so a
PDF never reaches the network or the file system at render time, whatever a template (or text
typed into it) points at.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.contrib.staticfiles import finders
from weasyprint.urls import URLFetcher, URLFetcherResponse

# Documents are rendered with this base URL, so "/static/css/pdf.css" resolves under it. The
# host is in the reserved .invalid domain: nothing is ever requested from it, the fetcher maps
# its paths to the static folders itself.
BASE_URL = "https://planner-static.invalid/"
HOST = "planner-static.invalid"


class RefusedURL(ValueError):
    """A URL the fetcher will not load."""


def static_path(url: str) -> Path | None:
    """The file a ``BASE_URL``-relative URL names inside the static folders, else ``None``."""
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.netloc != HOST or parts.query:
        return None
    path = unquote(parts.path)
    prefix = settings.STATIC_URL
    if not path.startswith(prefix):
        return None
    relative = path[len(prefix) :]
    if not relative or ".." in Path(relative).parts or relative.startswith("/"):
        return None
    found = finders.find(relative)
    return Path(found) if found else None


class StaticOnlyFetcher(URLFetcher):
    """Serves ``BASE_URL`` + ``static/...`` from the static folders; refuses the rest."""

    def __init__(self) -> None:
        super().__init__(allowed_protocols=("https",), fail_on_errors=False)
        self.refused: list[str] = []

    def fetch(self, url, headers=None):
        path = static_path(url)
        if path is None:
            self.refused.append(url)
            raise RefusedURL(f"Only the project's static files may be loaded, not {url!r}.")
        mime, _ = mimetypes.guess_type(path.name)
        return URLFetcherResponse(
            url, path.read_bytes(), {"Content-Type": mime or "application/octet-stream"}
        )
