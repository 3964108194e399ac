"""The ports file: nats-server's ``--ports_file_dir`` (``ports_file_dir`` in a configuration file).

Once the listeners are up, nats-server writes ``DIR/<executable>_<pid>.ports``
holding the URLs it can be reached on, and removes the file when it shuts
down; harnesses start it with ``-p -1 -m -1`` and read their ports there.
The JSON is Go's ``json.Marshal`` of nats-server's ``Ports``: keys
``nats``, ``monitoring``, ``cluster``, ``profile``, ``websocket`` in that
order, each a list of URLs, absent when that listener is; no spaces, no
trailing newline; the file mode is 0666 less the umask.  A listener bound to
every interface lists one URL per local address (loopback first).
"""

from __future__ import annotations

import json
import os
import socket
import sys

from fakejs.core.process import process_id

# What nats-server calls itself when fakejs runs as "fakejs" or "python -m fakejs".
DEFAULT_EXECUTABLE = "nats-server"
_OWN_NAMES = ("fakejs", "__main__.py", "-c", "-m", "")


def executable_name(argv0: str | None = None) -> str:
    """The file name's prefix: nats-server uses its own ``argv[0]`` base name.

    Launchers compute ``<basename of the binary they ran>_<pid>.ports``.  When
    fakejs runs under a name of its own (``fakejs``, ``python -m fakejs``, an
    interpreter) the name is ``nats-server``; under any other name (a link or
    an exec shim called ``nats-server``, say) it is that name, as nats-server's.
    """
    name = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    if name in _OWN_NAMES or name.startswith("python"):
        return DEFAULT_EXECUTABLE
    return name


def ports_file_path(directory: str, argv0: str | None = None) -> str:
    return os.path.join(directory, f"{executable_name(argv0)}_{process_id()}.ports")


def _local_addresses(host: str) -> list[str]:
    """The addresses a listener on ``host`` answers on, loopback first, IPv6 in brackets."""
    if host not in ("", "0.0.0.0", "::"):
        return [f"[{host}]" if ":" in host else host]
    found = ["127.0.0.1"]
    if host == "::":
        found.append("[::1]")
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        infos = []
    candidates = [str(info[4][0]) for info in infos]
    try:
        # the address of the default route's interface (connecting a UDP socket sends nothing)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            candidates.append(str(probe.getsockname()[0]))
    except OSError:
        pass
    for address in candidates:
        if address not in found and not address.startswith("127.") and address != "0.0.0.0":
            found.append(address)
    return found


def urls(scheme: str, host: str, port: int) -> list[str]:
    return [f"{scheme}://{address}:{port}" for address in _local_addresses(host)]


def ports_json(
    nats: list[str],
    monitoring: list[str] | None = None,
    websocket: list[str] | None = None,
    cluster: list[str] | None = None,
) -> str:
    """Go's marshalled ``Ports`` (the listeners fakejs has: client, monitoring, route, websocket).

    ``cluster`` is the route port's URLs (``urls("nats", host, broker.cluster_port)``).
    """
    document: dict[str, list[str]] = {"nats": nats}
    if monitoring:
        document["monitoring"] = monitoring
    if cluster:
        document["cluster"] = cluster
    if websocket:
        document["websocket"] = websocket
    return json.dumps(document, separators=(",", ":"))


def write_ports_file(path: str, text: str) -> None:
    """Write ``text`` to ``path`` whole: a reader polling for the file never sees half of it."""
    partial = path + ".tmp"
    with open(partial, "w") as handle:
        handle.write(text)
    os.replace(partial, path)
