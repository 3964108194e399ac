"""Both servers started from one configuration file: two accounts, one using the other's JetStream.

Account JS has JetStream and exports ``$JS.API.>`` (as a singleton service,
or with ``response_type: stream``) and ``$JS.ACK.>``; account APP imports
the API under ``JS.acc.API`` and the ack subjects as they are.  The
campaign's own client is JS's user; operations marked ``account: app`` go
through APP's imports (:mod:`fakejs.parity.families`).

A ``reload`` rewrites the file with one reloadable change
(:data:`CHANGES`) and reloads: fakejs through ``Server.reload`` with the
options the new text makes, nats-server through SIGHUP, after which the
reply waits (5 s at most) for its log to say the reload is done or refused.
Each server's text names its own store directory; nothing else differs.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
import time
from typing import Any

from fakejs.core.configfile.load import load_text
from fakejs.core.options import ServerOptions
from fakejs.server.server import Server
from fakejs.targets.real import ServerProcess

API_PREFIX = "JS.acc.API"
USERS = {"js": "nats://js:js@", "app": "nats://app:app@"}
RELOADED = "Reloaded server configuration"
RELOAD_FAILED = "Failed to reload server configuration"
RELOAD_LIMIT = 5.0  # seconds

# The reloadable changes a ``reload`` draws: (top-level lines, APP's permissions).  Changes to
# accounts, their users and permissions are not drawn yet.
CHANGES: dict[str, tuple[str, str]] = {
    "base": ("", ""),
    "max_payload": ("max_payload: 4096\n", ""),
    "debug": ("debug: true\n", ""),
    "max_connections": ("max_connections: 50\n", ""),
}


def config_text(store_dir: str, export: str, change: str = "base") -> str:
    """The configuration file: JetStream in ``store_dir``, the two accounts, and the drawn change."""
    top, app_permissions = CHANGES[change]
    return f"""listen: 127.0.0.1:-1
{top}jetstream {{ store_dir: "{store_dir}" }}
accounts {{
  JS {{
    jetstream: enabled
    users: [{{user: js, password: js}}]
    exports: [
      {{service: "$JS.API.>", response_type: {export}}}
      {{service: "$JS.ACK.>"}}
    ]
  }}
  APP {{
    users: [{{user: app, password: app{app_permissions}}}]
    imports: [
      {{service: {{account: JS, subject: "$JS.API.>"}}, to: "{API_PREFIX}.>"}}
      {{service: {{account: JS, subject: "$JS.ACK.>"}}}}
    ]
  }}
}}
"""


def fake_options(text: str) -> ServerOptions:
    """What ``fakejs -c FILE`` makes of ``text`` (the first problem raised)."""
    loaded = load_text(text, base=ServerOptions(port=0))
    problem = loaded.problem_text()
    if problem:
        raise RuntimeError(f"fakejs refuses the campaign's configuration: {problem}")
    return loaded.options


class AccountServer(ServerProcess):
    """nats-server from the two-account file; its JetStream files are account JS's."""

    @property
    def streams_dir(self) -> str:
        return os.path.join(self.store_dir, "jetstream", "JS", "streams")


class AccountServers:
    """The two servers of a two-account pair: started, reloaded, and their client URLs."""

    def __init__(self, export: str, binary: str | None = None) -> None:
        self.export = export
        self.fake_store = tempfile.mkdtemp(prefix="fakejs-parity-")
        self.real = AccountServer(binary, pin_streams=True)
        self.real.config = config_text(self.real.store_dir, export)
        self.fake = Server(fake_options(config_text(self.fake_store, export)))

    async def start(self) -> None:
        await self.fake.start()
        await self.real.start_async()

    def urls(self, user: str) -> tuple[str, str]:
        """``user``'s URLs of fakejs and of nats-server."""
        base = USERS[user]
        return (base + self.fake.url.split("://", 1)[1], base + self.real.url.split("://", 1)[1])

    async def reload(self, change: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """Rewrite both files with ``change`` and reload; each server's outcome."""
        return self.reload_fake(change), await self.reload_real(change)

    def reload_fake(self, change: str) -> dict[str, Any]:
        try:
            self.fake.reload(fake_options(config_text(self.fake_store, self.export, change)))
        except Exception as exc:  # noqa: BLE001 - a refusal (or no reload at all) is the outcome compared
            return {"failure": type(exc).__name__}
        return {"reloaded": True}

    async def reload_real(self, change: str) -> dict[str, Any]:
        text = config_text(self.real.store_dir, self.export, change)
        with open(os.path.join(self.real.store_dir, "nats-server.conf"), "w") as handle:
            handle.write(text)
        before = self.real.log_text(since_start=True)
        done, failed = before.count(RELOADED), before.count(RELOAD_FAILED)
        assert self.real.process is not None
        os.kill(self.real.process.pid, signal.SIGHUP)
        deadline = time.monotonic() + RELOAD_LIMIT
        while time.monotonic() < deadline:
            log = self.real.log_text(since_start=True)
            if log.count(RELOADED) > done:
                return {"reloaded": True}
            if log.count(RELOAD_FAILED) > failed:
                return {"failure": "ReloadRefused"}
            await asyncio.sleep(0.01)
        return {"failure": "TimeoutError"}

    async def stop(self) -> None:
        await self.real.stop_async()
        await self.fake.stop()
        shutil.rmtree(self.fake_store, ignore_errors=True)
