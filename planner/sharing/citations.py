"""Plain words for clients: internal source references become readable citations.

The engine's notes carry the team's own references to the research notes they come from
(``"(ref A3/D6: perimeter CRAC ~8-10 kW)"``, ``"Epoch constants.py"``). They help the
consultant check a figure; a client cannot follow them. :func:`client_snapshot` rewrites every
text of a revision snapshot for the client: each reference is replaced by a numbered marker
(``[1]``) and the sources it stood for are listed once, with title, publisher and date, in
the snapshot's ``"sources"`` appendix. The consultant's own pages keep the original notes.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Source:
    """A published document, cited the way a reader can find it."""

    title: str
    publisher: str
    date: str
    url: str = ""


# The documents behind the internal references (shared/reference/facility_tco_sourcing.md).
DOCUMENTS: dict[str, Source] = {
    "netbox": Source(
        "NetBox documentation: power panels and power feeds", "NetBox Labs", "2026-08",
        "https://netboxlabs.com/docs/netbox/models/dcim/powerfeed/",
    ),
    "nec": Source("National Electrical Code (NFPA 70), continuous loads", "NFPA", "2023"),
    "dgx": Source(
        "NVIDIA DGX H100/H200 User Guide: power specifications", "NVIDIA", "2024",
        "https://docs.nvidia.com/dgx/dgxh100-user-guide/",
    ),
    "uptime_survey": Source(
        "Uptime Institute Global Data Center Survey 2023", "Uptime Institute", "2023",
        "https://intelligence.uptimeinstitute.com/resource/uptime-institute-global-data-center-survey-2023",
    ),
    "schneider": Source(
        "Strategies for scaling data center infrastructure to meet AI demands",
        "Schneider Electric", "2024",
    ),
    "ashrae": Source(
        "Thermal Guidelines for Data Processing Environments, reference card",
        "ASHRAE TC 9.9", "2021",
    ),
    "insidehpc": Source(
        "Calculating CFMs for HPC power and cooling", "insideHPC (Dell)", "2011-04",
        "https://insidehpc.com/2011/04/calculating-cfms-for-hpc-power-and-cooling/",
    ),
    "woodmac": Source(
        "Transformer supply: shortages and high lead times", "Wood Mackenzie", "2025"
    ),
    "semianalysis": Source(
        "AI Neocloud Playbook and Anatomy", "SemiAnalysis", "2024-10",
        "https://semianalysis.substack.com/p/ai-neocloud-playbook-and-anatomy",
    ),
    "epoch": Source(
        "Training cost trends: open cost model and parameters", "Epoch AI", "2024",
        "https://github.com/epoch-research/training-cost-trends",
    ),
    "cbre": Source("North America Data Center Trends H2 2024", "CBRE", "2025"),
    "aws": Source(
        "Savings Plans FAQs", "Amazon Web Services", "2025",
        "https://aws.amazon.com/savingsplans/faqs/",
    ),
    "eia": Source(
        "Electric Power Annual 2023: average price by state", "U.S. Energy Information "
        "Administration", "2024", "https://www.eia.gov/electricity/annual/",
    ),
    "eurostat": Source(
        "Electricity prices for non-household consumers, H2 2023", "Eurostat", "2024"
    ),
    "amazon_10k": Source("Annual report (Form 10-K) 2024: server useful lives", "Amazon", "2025"),
}  # fmt: skip

# Which documents each internal reference code stands for.
REFERENCES: dict[str, tuple[str, ...]] = {
    "A1": ("netbox",),
    "A2": ("dgx", "epoch"),
    "A3": ("uptime_survey", "schneider"),
    "A4": ("ashrae",),
    "A5": ("nec", "netbox"),
    "A6": ("uptime_survey", "insidehpc"),
    "A7": ("woodmac",),
    "B1": ("semianalysis", "epoch"),
    "B2": ("semianalysis", "cbre", "epoch"),
    "B3": ("aws", "epoch"),
    "B4": ("semianalysis",),
    "B5": ("semianalysis",),
    "B6": ("eia", "eurostat"),
    "B7": ("amazon_10k", "epoch"),
    "D1": ("nec", "netbox"),
    "D2": ("netbox",),
    "D3": ("netbox",),
    "D4": ("dgx",),
    "D5": ("dgx", "epoch"),
    "D6": ("uptime_survey", "schneider"),
    "D7": ("ashrae",),
    "D8": ("insidehpc",),
    "D9": ("uptime_survey",),
    "D10": ("eia", "eurostat"),
    "D11": ("cbre",),
    "D12": ("epoch", "amazon_10k"),
    "D13": ("epoch",),
    "D14": ("semianalysis",),
    "D15": ("epoch", "aws"),
    "D16": ("semianalysis",),
    "D17": ("semianalysis",),
}

_CODE = r"[A-F]\d{0,2}"
_CODES = rf"{_CODE}(?:\s*(?:/|,|and)\s*{_CODE})*"
# "(ref A3/D6: text)" keeps its text; "(ref A4)" and "; ref B3" go; a bare "ref D5:" too.
_REF_WITH_TEXT = re.compile(rf"\(ref ({_CODES}):\s*([^()]*)\)")
_REF_ALONE = re.compile(rf"\s*\(ref ({_CODES})\)")
_REF_TRAILING = re.compile(rf"\s*[;,]\s*ref ({_CODES})(?=\))")
_REF_BARE = re.compile(rf"\bref ({_CODES}):?\s*")
# Internal file names of the sources: "Epoch constants.py" → "Epoch AI".
_EPOCH_FILE = re.compile(r"\bEpoch(?: AI)? [a-z_]+\.py\b")
_NETBOX_SETTING = re.compile(r"NetBox POWERFEED_DEFAULT_MAX_UTILIZATION=(\d+)")
_GUIDE = re.compile(r"\b(?:the )?seed guide\b", re.IGNORECASE)
# Sources the engine's notes name (as the consultant reads them), and their documents: the
# client reads a numbered marker instead, with the document in the appendix.
NAMED: dict[str, tuple[str, ...]] = {
    "Uptime Institute survey 2023": ("uptime_survey",),
    "Schneider Electric 2024": ("schneider",),
}
_NAMED = re.compile(
    r"[;,]?\s*(" + "|".join(re.escape(n) for n in sorted(NAMED, key=len, reverse=True)) + ")"
)


class _Citer:
    """Numbers the documents in the order a reader first meets them."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def marker(self, documents: list[str]) -> str:
        numbers = []
        for key in documents:
            if key not in self.numbers:
                self.numbers[key] = len(self.numbers) + 1
            if self.numbers[key] not in numbers:
                numbers.append(self.numbers[key])
        return "".join(f"[{n}]" for n in numbers)

    def documents(self, codes: str) -> list[str]:
        keys: list[str] = []
        for code in re.findall(_CODE, codes):
            keys += [k for k in REFERENCES.get(code, ()) if k not in keys]
        return keys

    def text(self, value: str) -> str:
        quick = "ref " in value or ".py" in value or "POWERFEED" in value
        if not quick and not _GUIDE.search(value) and not _NAMED.search(value):
            return value
        value = _NAMED.sub(lambda m: self.marker(list(NAMED[m.group(1)])), value)
        value = _NETBOX_SETTING.sub(
            lambda m: f"NetBox default {m.group(1)} %{self.marker(['netbox'])}", value
        )
        value = _EPOCH_FILE.sub(lambda m: f"Epoch AI{self.marker(['epoch'])}", value)
        value = _GUIDE.sub("our planning method", value)
        value = _REF_WITH_TEXT.sub(
            lambda m: f"({m.group(2)}){self.marker(self.documents(m.group(1)))}", value
        )
        value = _REF_ALONE.sub(lambda m: " " + self.marker(self.documents(m.group(1))), value)
        value = _REF_TRAILING.sub(lambda m: " " + self.marker(self.documents(m.group(1))), value)
        value = _REF_BARE.sub(lambda m: self.marker(self.documents(m.group(1))) + " ", value)
        return re.sub(r" {2,}", " ", value).replace(" )", ")").replace("( ", "(")

    def walk(self, value):
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.walk(v) for v in value]
        return value


def client_text(value: str) -> str:
    """One text without internal references (the markers are left out: no appendix)."""
    return re.sub(r"\s*(?:\[\d+\])+", "", _Citer().text(value))


# What a client reads of an open item (a result not current when published): what it is, and
# the state the template words; never the consultant's reason ("regenerate it (hand-made
# lines and hand-set quantities are kept)") nor an internal name ("Landed cost").
CLIENT_OPEN_ITEM_LABELS = {
    "chosen": "Chosen configuration",
    "option": "Chosen option",
    "tco": "Cost of ownership",
    "bom": "Bill of materials",
    "landed_cost": "Hardware prices",
    "timeline": "Timeline",
}


def _supplier_names(snapshot: dict) -> list[str]:
    """The names of the suppliers the snapshot holds (BOM lines, shipments, orders)."""
    names: list[str] = []
    bom = snapshot.get("bom") or {}
    orders = (snapshot.get("purchase_orders") or {}).get("orders") or []
    for row in [*(bom.get("lines") or []), *(bom.get("shipments") or []), *orders]:
        name = (row.get("supplier") or "").strip() if isinstance(row, dict) else ""
        if name and name not in names and not _ALIAS.fullmatch(name):
            names.append(name)
    return names


def _supplier_scrub(names: list[str], products: str = ""):
    """A function taking the suppliers' names out of a text: "PO-002 from Lowlands" →
    "PO-002", "(Lowlands Compute B.V.)" → "(the supplier)". A name's first word stands for it
    too when it is distinctive (capitalised, 5 letters or more: "Lowlands", not "Data") and
    names no product the plan buys (a maker selling direct, "Lenovo Global Technology", keeps
    "Lenovo ThinkSystem SR680a" in the quote)."""
    words = set(names)
    for name in names:
        first = name.split()[0].strip(",.") if name.split() else ""
        in_products = re.search(rf"(?<!\w){re.escape(first)}(?!\w)", products, re.IGNORECASE)
        if (
            len(first) >= 5
            and first[:1].isupper()
            and first.lower() not in _COMMON_WORDS
            and not in_products
        ):
            words.add(first)
    if not words:
        return lambda text: text
    alternatives = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    pattern = re.compile(rf"(?: from )?(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)

    def clean(text: str) -> str:
        return pattern.sub(
            lambda m: "" if m.group(0).lower().startswith(" from ") else "the supplier", text
        )

    return clean


_ALIAS = re.compile(r"Supplier \d+")
# Leading words of company names that are also ordinary words a plan uses.
_COMMON_WORDS = {"global", "north", "south", "first", "united", "general", "digital", "total"}


def _for_client(snapshot: dict) -> dict:
    """The audience rule: what a client may not see taken out of a snapshot (a copy).

    - no supplier: each supplier's name becomes "Supplier 1", "Supplier 2"… in the fields
      (so that rules comparing them still can) and "the supplier" in every text;
    - no consultant's instruction: an open item keeps its kind and state, with a client's
      label and no reason;
    - buy prices and margins stay in the snapshot only for the client's quote to be priced
      from; no client template prints them (the quote prints sell prices).
    """
    names = _supplier_names(snapshot)
    products = " ".join(
        str(line.get("description") or "")
        for line in (snapshot.get("bom") or {}).get("lines") or []
        if isinstance(line, dict)
    )
    scrub = _supplier_scrub(names, products)
    alias = {name: f"Supplier {i}" for i, name in enumerate(names, start=1)}

    def walk(value, key: str = ""):
        if isinstance(value, str):
            if key == "supplier":
                return alias.get(value.strip(), scrub(value))
            return scrub(value)
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v) for v in value]
        return value

    clean = walk(snapshot)
    clean["open_items"] = [
        {
            **item,
            "label": CLIENT_OPEN_ITEM_LABELS.get(item.get("kind", ""), item.get("label", "")),
            "reason": "",
        }
        for item in clean.get("open_items") or []
        if isinstance(item, dict)
    ]
    return clean


def client_snapshot(snapshot: dict, *, audience: str = "client") -> dict:
    """A copy of the snapshot for the client, with its appendix of sources.

    Every text has its internal references replaced by numbered markers; ``"sources"`` lists
    ``{"number", "title", "publisher", "date", "url"}`` in marker order. For the client
    (``audience="client"``, every share-link surface) the audience rule applies too
    (:func:`_for_client`: no supplier, no consultant's instruction); the consultancy's own
    internal cost sheet asks for ``audience="internal"`` (plain words, suppliers kept). A
    snapshot that has been through here already (its ``"audience"`` says for whom) is
    returned as it is.
    """
    if snapshot.get("audience"):
        return snapshot
    citer = _Citer()
    clean = citer.walk(_for_client(snapshot) if audience == "client" else snapshot)
    clean["audience"] = audience
    clean["sources"] = [
        {"number": number, **asdict(DOCUMENTS[key])} for key, number in citer.numbers.items()
    ]
    return clean
