"""fakejs: a local, JetStream-compatible NATS server in Python, made for testing.

In-process use from async code::

    from fakejs import Server

    async with Server() as server:      # a free port on 127.0.0.1
        nc = await nats.connect(server.url)

from a nats-server configuration file (``fakejs.options_from_config(text=...)``
or ``path=...``, then ``Server(options)``), and from synchronous code::

    from fakejs import ThreadedServer

    with ThreadedServer() as server:
        ...

and a cluster of them (``Cluster`` from async code, ``ThreadedCluster``
from synchronous code).

Inside, from the top: ``__main__`` (``python -m fakejs``), ``_version``
(``__version__``), ``pytest_plugin`` (the pytest plugin: fixtures and
markers), ``pytest_timeline`` (the plugin's timeline pages of failing tests), ``warm`` (the ``fakejs`` command's front door: a server forked
from a warm process, or started in the launcher's), the entry points
``cli`` (the ``fakejs`` command line) and
``parity`` (the differential parity campaign), ``targets`` (the servers a
test can run against), ``server`` (sockets, and the server that assembles
every layer), ``testkit`` (virtual time, faults, scenarios, the control
API), ``monitoring`` (nats-server's monitoring documents), ``jetstream``
(streams, consumers and their API), ``core`` (the server without sockets),
``protocol`` (the client and route protocols without I/O), ``conf`` (the
configuration file format) and ``gocompat`` (what Go does that Python does
not).

The package face only re-exports the public names; it may import every
layer, and nothing inside fakejs imports it (see docs/contributing/architecture.md
for the layers and what each may import).  The names are
imported on first use: ``python -m fakejs`` and ``import fakejs.cli`` pass
through this module, and a server started from the command line should not
pay for what it does not run.
"""

from __future__ import annotations

import importlib

from fakejs._version import __version__

TYPE_CHECKING = False  # typing's own, without importing typing: ``fakejs`` starts with this module
if TYPE_CHECKING:
    from typing import Any

    from fakejs.core.clock import SystemClock
    from fakejs.core.configfile import options_from_config
    from fakejs.core.options import ServerOptions
    from fakejs.server.local_cluster import Cluster
    from fakejs.server.server import Server
    from fakejs.server.threaded import ThreadedServer
    from fakejs.server.threaded_cluster import ThreadedCluster
    from fakejs.testkit.clock import ManualClock

# public name -> the module that defines it
_LAZY = {
    "Cluster": "fakejs.server.local_cluster",
    "ManualClock": "fakejs.testkit.clock",
    "Server": "fakejs.server.server",
    "ServerOptions": "fakejs.core.options",
    "SystemClock": "fakejs.core.clock",
    "ThreadedCluster": "fakejs.server.threaded_cluster",
    "ThreadedServer": "fakejs.server.threaded",
    "options_from_config": "fakejs.core.configfile",
}

__all__ = [
    "Cluster",
    "ManualClock",
    "Server",
    "ServerOptions",
    "SystemClock",
    "ThreadedCluster",
    "ThreadedServer",
    "__version__",
    "options_from_config",
]


def __getattr__(name: str) -> Any:
    """Import a public name the first time it is asked for (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fakejs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
