"""Where a launcher and its forkserver meet, and the few messages they exchange.

They meet on a Linux abstract Unix socket (no file to leave behind, gone
with its process) named for the user, the launcher's parent process (the
harness), and everything that decides which fakejs runs and how: the
interpreter, the package's place and version, and the environment
variables Python reads at start.  A launcher that differs in any of these
meets another forkserver, or none.

The launcher sends one request: a length, then the request itself in
:mod:`marshal`'s format (both ends run the same interpreter), with four file
descriptors beside it: its standard input, output and error, and the
reading end of its lifeline (a pipe whose writing end only the launcher
holds, so that its end, however it comes, ends the server).  The forkserver
answers with :data:`REFUSED`, or :data:`STARTED` and the server's pid, then
:data:`EXITED` and the server's wait status.

Standard library only, and only what a fresh interpreter has already loaded
or loads in well under a millisecond: every ``fakejs`` command imports this.
"""

from __future__ import annotations

import _socket
import binascii
import marshal
import os
import sys

from fakejs._version import __version__

# Reply kinds, each followed by an 8-byte signed integer.
STARTED = b"S"  # the server's pid
EXITED = b"X"  # the server's wait status
REFUSED = b"R"  # 0: the forkserver runs older code; start without it
REPLY_SIZE = 9

# stdin, stdout, stderr and the lifeline, in this order.
PASSED_DESCRIPTORS = 4

# The environment a forkserver must share with its launchers: what Python reads at start.
_STARTUP_VARIABLES = ("PYTHON", "LANG", "LC_")

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def address(parent_pid: int) -> str:
    """The abstract socket name of the forkserver for launchers of ``parent_pid``."""
    startup = sorted((name, value) for name, value in os.environ.items() if name.startswith(_STARTUP_VARIABLES))
    identity = repr((sys.executable, sys.version, _PACKAGE, __version__, startup)).encode(errors="surrogateescape")
    return f"\0fakejs-forkserver-{os.getuid()}-{parent_pid}-{binascii.crc32(identity):08x}"


def peer_is_this_user(connection: _socket.socket) -> bool:
    """Whether the other end of a Unix socket runs as this process's user (``SO_PEERCRED``)."""
    credentials = connection.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    return int.from_bytes(credentials[4:8], sys.byteorder) == os.getuid()


def encode_request(request: dict[str, object]) -> bytes:
    body = marshal.dumps(request)
    return len(body).to_bytes(8, "big") + body


def reply(kind: bytes, value: int) -> bytes:
    return kind + value.to_bytes(8, "big", signed=True)


def read_reply(connection: _socket.socket) -> tuple[bytes, int]:
    """The next reply, or ``(b"", 0)`` when the forkserver is gone (or closed its listener before accepting)."""
    data = b""
    while len(data) < REPLY_SIZE:
        try:
            chunk = connection.recv(REPLY_SIZE - len(data))
        except OSError:  # reset: a connection the forkserver never accepted
            chunk = b""
        if not chunk:
            return b"", 0
        data += chunk
    return data[:1], int.from_bytes(data[1:], "big", signed=True)
