"""Read the forms of a page as a browser would submit them (html.parser, no dependency).

``page_forms(html)`` returns every ``<form>`` with its attributes and the fields a browser
sends when it is submitted unchanged (controls outside it that name it in ``form=`` too):
named inputs, hidden ones included; checkboxes and radios only when checked; a date or number
the input type cannot hold sent as "", as browsers do; the selected options of each select
(the first option when none is marked); textareas; and the first named submit button (the
one a click would send).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

SKIPPED_INPUTS = {"file", "image", "reset", "button"}

# HTML's value sanitization: a browser shows and sends "" for a value these types cannot
# hold (so <input type=date value="01/06/2027"> submits an empty date).
VALID_VALUE = {
    "date": re.compile(r"\d{4,}-\d{2}-\d{2}"),
    "datetime-local": re.compile(r"\d{4,}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?"),
    "month": re.compile(r"\d{4,}-\d{2}"),
    "time": re.compile(r"\d{2}:\d{2}(:\d{2}(\.\d+)?)?"),
    "number": re.compile(r"-?(\d+(\.\d+)?|\.\d+)([eE][-+]?\d+)?"),
}


def sanitised(kind: str, value: str) -> str:
    """The value a browser keeps for an ``<input type=kind value=value>``."""
    pattern = VALID_VALUE.get(kind)
    return value if pattern is None or pattern.fullmatch(value) else ""


@dataclass
class HtmlForm:
    attrs: dict[str, str]
    fields: list[tuple[str, str]] = field(default_factory=list)
    submitter: tuple[str, str] | None = None

    @property
    def data(self) -> dict[str, str | list[str]]:
        """The POST data: one value per name, a list for repeated names."""
        out: dict[str, list[str]] = {}
        pairs = [*self.fields, *([self.submitter] if self.submitter else [])]
        for name, value in pairs:
            out.setdefault(name, []).append(value)
        return {k: v[0] if len(v) == 1 else v for k, v in out.items()}


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[HtmlForm] = []
        self._form: HtmlForm | None = None
        self._owner: HtmlForm | str | None = None  # the form (or form id) of the control
        self._pending: list[tuple[str, str, str, bool]] = []  # (form id, kind, name, value)
        self._select: dict | None = None
        self._option: dict | None = None
        self._textarea: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            self._form = HtmlForm(attrs=a)
            self.forms.append(self._form)
            return
        owner = a["form"] if a.get("form") else self._form
        if tag in ("input", "button", "select", "textarea"):
            self._owner = owner
        if owner is None:
            return
        disabled = "disabled" in a
        if tag == "input" and a.get("name") and not disabled:
            kind = a.get("type", "text").lower()
            if kind == "submit":
                self._add(owner, a["name"], a.get("value", ""), submitter=True)
            elif kind in ("checkbox", "radio"):
                if "checked" in a:
                    self._add(owner, a["name"], a.get("value", "on"))
            elif kind not in SKIPPED_INPUTS:
                self._add(owner, a["name"], sanitised(kind, a.get("value", "")))
        elif tag == "button" and a.get("name") and a.get("type", "submit") == "submit":
            if not disabled:
                self._add(owner, a["name"], a.get("value", ""), submitter=True)
        elif tag == "select" and a.get("name") and not disabled:
            self._select = {"name": a["name"], "multiple": "multiple" in a, "options": []}
        elif tag == "option" and self._select is not None:
            self._option = {"value": a.get("value"), "selected": "selected" in a, "text": ""}
            self._select["options"].append(self._option)
        elif tag == "textarea" and a.get("name") and not disabled:
            self._textarea = {"name": a["name"], "text": ""}

    def _add(self, owner, name: str, value: str, *, submitter: bool = False) -> None:
        if isinstance(owner, str):
            self._pending.append((owner, name, value, submitter))
        elif submitter:
            owner.submitter = owner.submitter or (name, value)
        else:
            owner.fields.append((name, value))

    def close(self) -> None:
        super().close()
        by_id = {f.attrs["id"]: f for f in self.forms if f.attrs.get("id")}
        for form_id, name, value, submitter in self._pending:
            if form_id in by_id:
                self._add(by_id[form_id], name, value, submitter=submitter)

    def handle_data(self, data):
        if self._textarea is not None:
            self._textarea["text"] += data
        elif self._option is not None:
            self._option["text"] += data

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "option":
            self._option = None
        elif tag == "select" and self._select is not None:
            options = self._select["options"]
            chosen = [o for o in options if o["selected"]]
            if not chosen and options and not self._select["multiple"]:
                chosen = options[:1]
            for o in chosen:
                value = o["value"] if o["value"] is not None else o["text"].strip()
                self._add(self._owner, self._select["name"], value)
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            text = self._textarea["text"]
            # HTML drops one newline right after <textarea>.
            text = text[1:] if text.startswith("\n") else text
            self._add(self._owner, self._textarea["name"], text.replace("\r\n", "\n"))
            self._textarea = None


def page_forms(html: str) -> list[HtmlForm]:
    parser = _Parser()
    parser.feed(html)
    parser.close()
    return parser.forms


def post_forms(html: str) -> list[HtmlForm]:
    return [f for f in page_forms(html) if f.attrs.get("method", "get").lower() == "post"]


def page_form(html: str, *, containing: str) -> dict[str, str | list[str]]:
    """The submitted data of the first form with a field named ``containing`` (a name sent
    more than once gives a list), without its submit button."""
    for form in page_forms(html):
        if containing in {name for name, _ in form.fields}:
            return HtmlForm(attrs=form.attrs, fields=form.fields).data
    raise AssertionError(f"No form with a field named {containing!r} on the page.")


def hidden_inputs(html: str, *names: str) -> dict[str, str]:
    """The values of the named inputs anywhere in ``html``, in a form or not (e.g. an htmx
    answer's out-of-band version fields)."""
    found: dict[str, str] = {}

    class _Inputs(HTMLParser):
        def handle_starttag(self, tag, attr_list):
            attrs = dict(attr_list)
            if tag == "input" and attrs.get("name") in names:
                found[attrs["name"]] = attrs.get("value") or ""

    _Inputs().feed(html)
    return found
