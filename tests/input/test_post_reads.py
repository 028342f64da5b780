"""Every value a view takes from a POST goes through a form (and so the shared input rules:
length, no NUL, ranges), unless it is a key from a closed set the view checks itself.

The consultant's reply once read ``request.POST.get("body")`` straight into a database row;
a NUL byte then made PostgreSQL answer 500. This walk fails on any new direct read of a POST
field that is not listed below with the check that makes it safe.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("planner", "catalog", "sourcing")

# (module, POST key) -> why reading it directly is safe.
CLOSED_KEYS = {
    ("planner/views/freshness.py", "next"): "a redirect target, kept only if "
    "url_has_allowed_host_and_scheme accepts it",
    ("planner/views/workloads.py", "preset"): "a workload kind, looked up in WorkloadKind",
    ("planner/views/workloads.py", "candidate"): "a candidate key, looked up in the sweep's "
    "own candidates (an unknown key is refused)",
    ("planner/views/organisation.py", "revoke"): "a token id: 1 to 9 digits, else 404",
    ("planner/facility/views.py", "action"): "a button name compared with fixed strings",
    ("planner/measured/views.py", "enabled"): "a checkbox compared with '1'",
    ("planner/measured/views.py", "request_type"): "a request type looked up in the "
    "import's own result (an unknown one is refused)",
    ("planner/login_throttle.py", "username"): "a sign-in name handed to django-axes, "
    "which only counts it",
    ("planner/login_throttle.py", "next"): "echoed into the lockout page through the "
    "template's auto-escaping",
    ("sourcing/views.py", "action"): "a button name compared with fixed strings",
    ("sourcing/views.py", "measure"): "a duty's name, looked up among the conditional duties "
    "in force on the plan (an unknown one is refused)",
}


def _post_reads(path: Path) -> list[tuple[str, int]]:
    """(key, line) of every ``request.POST.get("key")`` and ``request.POST["key"]``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        target, key = None, None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("get", "getlist") and node.args:
                target, key = node.func.value, node.args[0]
        elif isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        if (
            isinstance(target, ast.Attribute)
            and target.attr == "POST"
            and isinstance(key, ast.Constant)
            and isinstance(key.value, str)
        ):
            found.append((key.value, node.lineno))
    return found


def _modules() -> list[Path]:
    return [
        path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def test_no_view_reads_a_free_value_from_a_post_without_a_form():
    unlisted = [
        f"{path.relative_to(ROOT)}:{line} reads POST[{key!r}]"
        for path in _modules()
        for key, line in _post_reads(path)
        if (str(path.relative_to(ROOT)), key) not in CLOSED_KEYS
    ]
    assert not unlisted, (
        "Read these through a form (the shared input rules), or list the key with the check "
        f"that makes it safe: {unlisted}"
    )


def test_every_listed_key_is_still_read_and_has_its_reason():
    read = {
        (str(path.relative_to(ROOT)), key) for path in _modules() for key, _ in _post_reads(path)
    }
    stale = [entry for entry in CLOSED_KEYS if entry not in read]
    assert not stale, f"No longer read directly; remove from CLOSED_KEYS: {stale}"
    assert all(reason.strip() for reason in CLOSED_KEYS.values())


def test_the_walk_finds_a_direct_read(tmp_path):
    sample = tmp_path / "views.py"
    sample.write_text('def v(request):\n    return request.POST.get("body", "")\n')
    assert _post_reads(sample) == [("body", 2)]
