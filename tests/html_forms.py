"""Read a page's forms the way a browser submits them (for tests that load, edit and post).

``page_form(html, containing="reason")`` is the data of the first form with a field of that
name: text inputs and hidden fields by value, checked checkboxes and radios, the selected
option (or the first), textareas by their text; inputs outside a form that name it with
``form="id"`` count for that form. Buttons are left out.
"""

from __future__ import annotations

from html.parser import HTMLParser


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[dict] = []  # {"attrs": {...}, "fields": [(name, value)]}
        self._by_id: dict[str, dict] = {}
        self._orphans: list[tuple[str, str, str]] = []  # (form id, name, value)
        self._current: dict | None = None
        self._select: tuple[dict | None, str, list[str], list[str]] | None = None
        self._option: str | None = None
        self._textarea: tuple[dict | None, str] | None = None
        self._text: list[str] = []

    def _target(self, attrs: dict) -> dict | None:
        if attrs.get("form"):
            return self._by_id.get(attrs["form"]) or {"pending": attrs["form"]}
        return self._current

    def _add(self, target: dict | None, name: str, value: str) -> None:
        if target is None or not name:
            return
        if "pending" in target:
            self._orphans.append((target["pending"], name, value))
        else:
            target["fields"].append((name, value))

    def handle_starttag(self, tag: str, attr_list) -> None:
        attrs = {k: (v if v is not None else "") for k, v in attr_list}
        if tag == "form":
            self._current = {"attrs": attrs, "fields": []}
            self.forms.append(self._current)
            if attrs.get("id"):
                self._by_id[attrs["id"]] = self._current
        elif tag == "input":
            kind = attrs.get("type", "text").lower()
            if kind in ("submit", "button", "image", "reset", "file"):
                return
            if kind in ("checkbox", "radio") and "checked" not in attrs:
                return
            value = attrs.get("value", "on" if kind in ("checkbox", "radio") else "")
            self._add(self._target(attrs), attrs.get("name", ""), value)
        elif tag == "select":
            self._select = (self._target(attrs), attrs.get("name", ""), [], [])
        elif tag == "option" and self._select is not None:
            self._option = attrs.get("value")
            self._text = []
            if "selected" in attrs:
                self._select[2].append(self._option if self._option is not None else "")
        elif tag == "textarea":
            self._textarea = (self._target(attrs), attrs.get("name", ""))
            self._text = []

    def handle_data(self, data: str) -> None:
        self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._current = None
        elif tag == "option" and self._select is not None:
            value = self._option if self._option is not None else "".join(self._text).strip()
            self._select[3].append(value)
            if self._select[2] and self._select[2][-1] is None:
                self._select[2][-1] = value
        elif tag == "select" and self._select is not None:
            target, name, selected, every = self._select
            for value in selected or every[:1]:
                self._add(target, name, value)
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            target, name = self._textarea
            text = "".join(self._text)
            self._add(target, name, text[1:] if text.startswith("\n") else text)
            self._textarea = None

    def close(self) -> None:
        super().close()
        for form_id, name, value in self._orphans:
            if form_id in self._by_id:
                self._by_id[form_id]["fields"].append((name, value))


def page_forms(html: str) -> list[dict]:
    parser = _Forms()
    parser.feed(html)
    parser.close()
    return parser.forms


def page_form(html: str, *, containing: str) -> dict[str, str | list[str]]:
    """The submitted data of the first form with a field named ``containing``."""
    for form in page_forms(html):
        names = [name for name, _ in form["fields"]]
        if containing in names:
            data: dict[str, str | list[str]] = {}
            for name, value in form["fields"]:
                if name in data:
                    previous = data[name]
                    data[name] = (
                        [*previous, value] if isinstance(previous, list) else [previous, value]
                    )
                else:
                    data[name] = value
            return data
    raise AssertionError(f"No form with a field named {containing!r} on the page.")


def hidden_inputs(html: str, *names: str) -> dict[str, str]:
    """The values of the named hidden inputs anywhere in ``html`` (e.g. an htmx answer's
    out-of-band version fields)."""
    found: dict[str, str] = {}

    class _Hidden(HTMLParser):
        def handle_starttag(self, tag, attr_list):
            attrs = dict(attr_list)
            if tag == "input" and attrs.get("name") in names:
                found[attrs["name"]] = attrs.get("value") or ""

    _Hidden().feed(html)
    return found
