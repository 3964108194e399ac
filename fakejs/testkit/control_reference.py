"""The control API's reference, rendered from its declarations.

The documentation's reference section is this module's text: every request
of :data:`fakejs.testkit.control_routes.ROUTES` with its body's fields,
every action, event change and match key of :mod:`fakejs.testkit.arguments`.
It lies between two markers on the page (:data:`BEGIN`, :data:`END`), and
:func:`with_reference` puts the current text there, so a test can tell when
the page and the declarations differ.
"""

from __future__ import annotations

from fakejs.core.hooks import HOOK_POINTS, MATCH_KEYS
from fakejs.testkit.arguments import ACTION_ARGUMENTS, CHANGE_ARGUMENTS, MATCH_FIELDS
from fakejs.testkit.control_routes import ROUTES
from fakejs.testkit.schema import Request, markdown_table

__all__ = ["BEGIN", "END", "reference_markdown", "with_reference"]

BEGIN = "<!-- reference: generated from the declarations in fakejs/testkit; do not edit by hand -->"
END = "<!-- end of reference -->"


def reference_markdown() -> str:
    """The reference: the requests, then each one's fields, the actions, the event changes and the match keys."""
    parts = [
        _requests(),
        *(_section(route.request.name, route.request) for route in ROUTES if route.path[0] != "action"),
    ]
    parts.append(
        "### Actions\n\n`action/<name>` (`$FAKEJS.ACTION.<NAME>`) runs an action; a fault's `do` may name one.\n"
    )
    parts += [_section(name, request) for name, request in ACTION_ARGUMENTS.items()]
    parts.append("### Event changes\n\nA fault's `do` may name an event change its hook point allows.\n")
    parts += [_section(name, request, _points_allowing(name)) for name, request in CHANGE_ARGUMENTS.items()]
    parts.append(_hook_points())
    return "\n".join(parts)


def with_reference(page: str) -> str:
    """``page`` with the current reference between its markers."""
    start = page.index(BEGIN) + len(BEGIN)
    end = page.index(END, start)
    return page[:start] + "\n\n" + reference_markdown() + "\n" + page[end:]


ACTION_ROW = (
    "| `action/<name>` | `$FAKEJS.ACTION.<NAME>` | `POST /fakejs/action/<name>` | Run an action ([below](#actions)) |"
)


def _requests() -> str:
    lines = ["### Requests", "", "| request | NATS subject | HTTP | what it does |", "| --- | --- | --- | --- |"]
    for route in ROUTES:
        if route.path[0] != "action":
            lines.append(
                f"| `{route.request.name}` | {f'`{route.subject}`' if route.subject else '—'} | `{route.http}` "
                f"| {route.request.description} |"
            )
        elif ACTION_ROW not in lines:
            lines.append(ACTION_ROW)
    return "\n".join(lines) + "\n"


def _section(name: str, request: Request, where: str = "") -> str:
    return f"#### `{name}`\n\n{request.description}{where}.\n\n{markdown_table(request)}"


def _points_allowing(change: str) -> str:
    points = [point for point, (_, changes) in HOOK_POINTS.items() if change in changes]
    return " (at " + ", ".join(f"`{point}`" for point in points) + ")"


def _hook_points() -> str:
    lines = [
        "### Hook points and match keys",
        "",
        "A fault's `on` names a hook point; its `match` may hold the keys the point offers.",
        "",
        "| hook point | when | event changes | match keys |",
        "| --- | --- | --- | --- |",
    ]
    for point, (when, changes) in HOOK_POINTS.items():
        lines.append(f"| `{point}` | {when} | {_codes(changes)} | {_codes(MATCH_KEYS[point])} |")
    lines += ["", "| match key | type | description |", "| --- | --- | --- |"]
    for name, spec in MATCH_FIELDS.items():
        lines.append(f"| `{name}` | {spec.type_text} | {spec.description} |")
    return "\n".join(lines) + "\n"


def _codes(names: frozenset[str]) -> str:
    return ", ".join(f"`{name}`" for name in sorted(names))
