"""Plain words for clients: the pages and PDFs a client sees carry no internal references
(research-note codes, source file names, the guide's working name, raw field names); their
sources are listed as readable citations in an appendix instead."""

import ast
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings
from django.template.loader import get_template
from django.urls import reverse

from planner.sharing import body as body_module
from planner.sharing import citations, services
from planner.sharing.models import PlanRevision
from tests.sharing.conftest import pdf_text

# What a client must never read. Prometheus metric names (``vllm:kv_cache_usage_perc``) are
# the names the client's own monitoring uses, so they are allowed.
INTERNAL = {
    "the guide's working name": re.compile(r"\bseed\b", re.IGNORECASE),
    "a research-note code": re.compile(r"\bref [A-Z][0-9]"),
    "a source file name": re.compile(r"\b[a-z_]+\.py\b"),
    "a raw field name": re.compile(r"(?<![:\w])[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"),
}
URL = re.compile(r"https?://\S+")


class _Text(HTMLParser):
    """The text a reader sees: no tags, attributes, scripts or styles."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return re.sub(r"\s+", " ", "".join(parser.parts))


def internal_references(text: str) -> list[str]:
    text = URL.sub(" ", re.sub(r"\s+", " ", text))
    found = []
    for what, pattern in INTERNAL.items():
        for m in pattern.finditer(text):
            found.append(f"{what}: …{text[max(0, m.start() - 60) : m.end() + 30]}…")
    return found


@pytest.fixture
def link(plan, consultant):
    return services.share_link_create(
        plan=plan, user=consultant, revision=None, expires_at=None, note="for the client"
    )


def test_the_share_page_speaks_plain_words_and_lists_its_sources(client, link):
    response = client.get(reverse("sharing:public", args=[link.token]))
    assert response.status_code == 200
    text = visible_text(response.content.decode())
    assert internal_references(text) == []
    # The demo's cooling note cites the rack-density surveys: now a numbered citation.
    assert "Sources" in text
    assert "Uptime Institute Global Data Center Survey 2023. Uptime Institute, 2023." in text
    assert re.search(r"perimeter CRAC ~8-10 kW[^\[]*\[\d\]", text)
    # Small words: the enrichment workload runs on one replica; Amsterdam has power already.
    assert "1 replica" in text and not re.search(r"\b1 replicas|\b1 servers|1–1 ", text)
    assert "never days" not in text and "no limit days" not in text
    assert "(s)" not in text  # "1 rack", "3 racks": counts with their noun in the right number


@pytest.mark.parametrize("kind", ["quote", "report", "checklist"])
def test_every_client_pdf_speaks_plain_words(plan, kind):
    revision = PlanRevision.objects.get(plan=plan, number=1)
    text, _, _ = pdf_text(services.document_render(revision=revision, kind=kind))
    assert internal_references(text) == []
    if kind == "report":
        flat = re.sub(r"\s+", " ", text)
        assert "Sources" in flat and "Uptime Institute" in flat
        assert "on-demand" in flat.lower()  # chart legends: each provider's on-demand option
        assert "Hardware price" in flat  # the sensitivity chart's drivers


def test_the_consultant_keeps_the_internal_notes(plan):
    revision = PlanRevision.objects.get(plan=plan, number=1)
    raw = str(revision.snapshot)
    # Stored as the engine wrote it (the source by name); a numbered citation only for clients.
    assert "Uptime Institute survey 2023" in raw


def test_references_become_numbered_citations_once():
    snapshot = {
        "sites": [
            {"reason": "Air handles it (ref A3/D6: perimeter CRAC ~8-10 kW)."},
            {"reason": "Allowable inlet ranges (ref A4)."},
            {"reason": "19 % of cluster cost, Epoch constants.py (ref B2, D13)."},
        ],
        "note": "From the seed guide; NetBox POWERFEED_DEFAULT_MAX_UTILIZATION=80 (ref A5, D1).",
    }
    clean = citations.client_snapshot(snapshot)
    texts = [s["reason"] for s in clean["sites"]] + [clean["note"]]
    assert texts[0] == "Air handles it (perimeter CRAC ~8-10 kW)[1][2]."
    assert texts[1] == "Allowable inlet ranges [3]."
    assert all(internal_references(t) == [] for t in texts), texts
    numbers = [s["number"] for s in clean["sources"]]
    assert numbers == list(range(1, len(numbers) + 1))
    titles = {s["title"] for s in clean["sources"]}
    assert "Thermal Guidelines for Data Processing Environments, reference card" in titles
    assert all(s["publisher"] and s["date"] for s in clean["sources"])
    assert citations.client_snapshot(clean) is clean  # already for the client
    assert snapshot["sites"][0]["reason"].endswith("(ref A3/D6: perimeter CRAC ~8-10 kW).")


def test_every_reference_code_names_known_documents():
    for code, keys in citations.REFERENCES.items():
        assert keys, code
        for key in keys:
            assert key in citations.DOCUMENTS, (code, key)


def test_the_body_fingerprint_covers_every_template_and_module_it_renders_with():
    """A change to anything the stored body is rendered with must give a new fingerprint."""
    include = re.compile(r"""{%\s*include\s+["']([^"']+)["']""")
    for name in body_module.FINGERPRINT_TEMPLATES:
        source = Path(get_template(name).origin.name).read_text()
        for included in include.findall(source):
            assert included in body_module.FINGERPRINT_TEMPLATES, (name, included)
    sources = set(body_module.FINGERPRINT_SOURCES)
    for path in sources:
        tree = ast.parse((Path(settings.BASE_DIR) / path).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "planner":
                for alias in node.names:
                    module = f"{node.module}.{alias.name}"
                    if module.endswith(".models") or node.module.endswith(".models"):
                        continue  # rows, not rendering code
                    candidates = {
                        module.replace(".", "/") + ".py",
                        node.module.replace(".", "/") + ".py",
                    }
                    assert candidates & sources, (path, module)


def test_what_the_client_opens_through_the_link_speaks_plain_words(
    client, link, plan, consultant, mailoutbox, django_capture_on_commit_callbacks
):
    """Through the share link, as the client gets them: the three PDFs (or the report's wait
    page), the page with a consultant's reply in the thread, the e-mail that a revision is
    ready, and the page of a revoked link."""
    from planner.sharing import notify
    from planner.sharing.models import Comment

    for kind in ("quote", "report", "checklist"):
        response = client.get(reverse("sharing:public_document", args=[link.token, kind]))
        assert response.status_code == 200, kind
        if response["Content-Type"] == "application/pdf":
            body = b"".join(response.streaming_content) if response.streaming else response.content
            text = pdf_text(body)[0]
        else:  # the report's progress page while it renders
            text = visible_text(response.content.decode())
        assert text.strip() and internal_references(text) == [], (kind, internal_references(text))

    question = Comment.objects.filter(revision=link.revision or plan.revisions.latest("number"),
                                      from_client=True).first()  # fmt: skip
    services.comment_reply(parent=question, user=consultant,
                           body="Yes: the Frankfurt suite can be ready two weeks earlier.")  # fmt: skip
    page = visible_text(client.get(reverse("sharing:public", args=[link.token])).content.decode())
    assert "two weeks earlier" in page and internal_references(page) == []

    plan.client.contact_email = "sanne@example.com"
    plan.client.save()
    revision = plan.revisions.latest("number")
    with django_capture_on_commit_callbacks(execute=True):  # the mail leaves after commit
        notify.revision_notify_client(revision, link, "https://plans.example.com/s/abc/")
    mail = mailoutbox[-1]
    assert (
        internal_references(
            f"{mail.subject} {mail.body}".replace("https://plans.example.com/s/abc/", "")
        )
        == []
    )  # noqa: E501

    services.share_link_revoke(link=link, user=consultant)
    gone = client.get(reverse("sharing:public", args=[link.token]))
    text = visible_text(gone.content.decode())
    assert gone.status_code in (403, 404, 410) and text.strip() and internal_references(text) == []


# A facility check's value or limit: a number with its unit ("2 racks", "15.1 kW",
# "28 days of slack"), or words alone ("never", "no limit", "—"); never "2.0 racks" or "35.5".
CHECK_FIGURE = (
    r"(?:-?\d[\d,]*(?:\.\d*[1-9])? (?:kW|BTU/h|CFM|m³/h|°C|°F|[a-z]+(?: late| of slack)?)"
    r"|never|no limit|—)"
)
CHECK_ROW_IN_PDF = re.compile(
    rf"(?:^|\s)(?:pass|warn|fail) (?!{CHECK_FIGURE} {CHECK_FIGURE}(?=\s|$))"
)


def test_the_site_checks_show_each_figure_with_its_unit(client, link, plan):
    """The share page's and the report PDF's check tables: whole counts in the right number,
    every value and limit with its unit (one rule, shown.measure)."""
    page = client.get(reverse("sharing:public", args=[link.token])).content.decode()
    facility = page[page.index('id="section-facility"') : page.index('id="section-tco"')]
    cells = re.findall(r'</span></td><td class="num">([^<]*)</td><td class="num">([^<]*)</td>',
                       facility)  # fmt: skip
    assert len(cells) >= 12  # every check of each site
    bad = [pair for pair in cells if not all(re.fullmatch(CHECK_FIGURE, c) for c in pair)]
    assert bad == []
    assert ("2 racks", "4 racks") in cells and ("1 server", "1 server") in cells

    revision = PlanRevision.objects.get(plan=plan, number=1)
    text, _, _ = pdf_text(services.document_render(revision=revision, kind="report"))
    section = text[text.index("Facility checks") :]
    assert "2 racks 4 racks" in section and "days of slack" in section
    bad = [section[m.start() : m.end() + 40] for m in CHECK_ROW_IN_PDF.finditer(section)]
    assert bad == []
