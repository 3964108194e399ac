"""The control API's NATS side: the ``$FAKEJS.>`` subscription of a server.

Every server with the control API on subscribes at start, but few tests
ever send a control request; the operations (:mod:`fakejs.testkit.control_api`,
the controller and everything it reaches) are imported at the first
request, so a plain start does not pay for them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fakejs.testkit.access import ControlAccess

if TYPE_CHECKING:
    from fakejs.core.broker import Broker
    from fakejs.testkit.control import Controller

PREFIX = "$FAKEJS"


class ControlSubjects:
    """Serves ``$FAKEJS.>`` requests through an internal subscription.

    The subscription lives in the default account, where every client of a
    server without accounts is; :meth:`ControlAccess.allows_nats` decides
    per request whether its publisher may use it.  ``controller`` gives the
    server's controller, which the server makes when first asked.
    """

    def __init__(self, controller: Callable[[], Controller], broker: Broker) -> None:
        self._controller = controller
        self.access = ControlAccess(broker.options)
        self.router = broker.accounts.default.router
        self._sub = self.router.subscribe_internal(PREFIX + ".>", self._on_request, local_only=True)

    def _on_request(self, subject: str, reply: str, hdr: bytes | None, payload: bytes, origin: Any) -> bool:
        tokens = subject.split(".")[1:]
        if tokens[:1] == ["INBOX"]:
            return False  # the controller's own reply inboxes
        # The control API and the controller come with the first request (see the module docstring)
        from fakejs.testkit import control_api

        if self.access.allows_nats(origin):
            _, doc = control_api.handle(self._controller(), [t.lower() for t in tokens], payload)
        else:
            doc = {"error": control_api.DENIED}
        if reply:
            self.router.publish(reply, "", None, json.dumps(doc).encode(), None)
        return True

    def close(self) -> None:
        self.router.unsubscribe(self._sub)
