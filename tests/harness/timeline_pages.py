"""Timeline pages in tests: the events a page embeds, and the ini of a pytester run that writes pages.

:func:`embedded_json` reads back the document a page carries in its
``<script type="application/json">``; :data:`INI` configures pytest-asyncio
for the small suites pytester runs with ``--fakejs-timeline``.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

from fakejs.testkit.timeline_page import unshaped

INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"


def embedded_json(text: str) -> Any:
    """The JSON in the page's ``<script type="application/json">``, with its ``events`` rebuilt from its rows."""

    class Data(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[str] = []
            self.inside = False

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            self.inside = tag == "script" and ("type", "application/json") in attrs

        def handle_data(self, data: str) -> None:
            if self.inside:
                self.found.append(data)

        def handle_endtag(self, tag: str) -> None:
            self.inside = False

    parser = Data()
    parser.feed(text)
    (data,) = parser.found
    document = json.loads(data)
    document["events"] = unshaped(document)
    return document
