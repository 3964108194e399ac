"""The running server: asyncio listeners, the :class:`Server` that assembles every layer, and its thread handle.

``connection`` (one client socket and its session), ``routes`` (the
route port: sockets to the other servers of a cluster), ``leafport`` (the
leaf port and the leaf remotes' dials), ``http`` (the HTTP
port for monitoring and the control API), ``server`` (the public
:class:`Server`), ``threaded`` (:class:`ThreadedServer`, the server on
its own thread) and ``local_cluster`` (:class:`~fakejs.server.local_cluster.Cluster`,
servers of one cluster in one process, failing on cue).  The only package that touches sockets.  May import every
layer below it (:mod:`fakejs.testkit`, :mod:`fakejs.monitoring`,
:mod:`fakejs.jetstream`, :mod:`fakejs.core`, :mod:`fakejs.protocol`,
:mod:`fakejs.gocompat`).  The two public names are imported on first use:
the command line runs a :class:`Server` and has no use for the thread handle.

The rest: ``listeners`` (the ports, opened and closed in nats-server's
order), ``layers`` (the sans-IO stages between a socket and its session)
with ``tls``, ``tls_greeting`` (INFO and the handshake on the TLS port),
``tls_names`` (Go's names for what OpenSSL negotiates), ``websocket`` (the
HTTP upgrade and framed NATS bytes), ``wsframes`` (WebSocket frames on
wsproto) and ``wslistener`` (the websocket port); ``control_http`` (the
control API over HTTP), ``jetstreams`` (which accounts get JetStream),
``account_purge`` (``$JS.API.ACCOUNT.PURGE`` from the system account),
``start_lines`` (the start and stop log lines), ``portsfile`` (the ports
file), ``loop_thread`` (an asyncio loop on a daemon thread), ``idle_spin``
(the command line's loop polling a while after a client's read), ``reload``
(configuration reload: new options applied) and ``reload_steps`` (what a
reload does beyond the options); for the in-process cluster,
``threaded_cluster`` (the cluster on a thread), ``cluster_replication``
(the JetStream replicated across its servers, and its elections on cue),
``cluster_hooks`` (hook points per node),
``cluster_scenarios`` (scenarios on a cluster), ``cluster_timeline``
(the nodes' timelines as one) and ``port_holds`` (a node's ports kept
bound while it is down).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakejs.server.server import Server
    from fakejs.server.threaded import ThreadedServer

_LAZY = {"Server": "fakejs.server.server", "ThreadedServer": "fakejs.server.threaded"}

__all__ = ["Server", "ThreadedServer"]


def __getattr__(name: str) -> Any:
    """Import a public name the first time it is asked for (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fakejs.server' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
