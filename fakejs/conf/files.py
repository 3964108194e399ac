"""Reading configuration files: Go's path joining and Go's error texts.

Include paths are joined to the including file's directory the way Go's
``filepath.Join`` does it -- lexically, so even an absolute include path is
taken as relative to that directory.  Read failures are reported with the
text of Go's ``os.ReadFile`` error (``open PATH: no such file or
directory``, ``read PATH: is a directory``).
"""

from __future__ import annotations

import errno
import os
import posixpath

from fakejs.conf.errors import ConfigError


def go_clean(path: str) -> str:
    """Go's ``filepath.Clean`` on a POSIX system."""
    if not path:
        return "."
    cleaned = posixpath.normpath(path)
    if cleaned.startswith("//"):
        cleaned = "/" + cleaned.lstrip("/")
    return cleaned


def go_dir(path: str) -> str:
    """Go's ``filepath.Dir``: everything before the last slash, cleaned (``.`` when there is none)."""
    return go_clean(path[: path.rfind("/") + 1])


def go_join(*parts: str) -> str:
    """Go's ``filepath.Join``: the non-empty parts joined with ``/``, then cleaned."""
    joined = "/".join(part for part in parts if part)
    return go_clean(joined) if joined else ""


def _errno_text(code: int | None) -> str:
    """Go's text for an errno: the C library's, starting in lower case."""
    text = os.strerror(code) if code is not None else "unknown error"
    return text[:1].lower() + text[1:]


def read_config(path: str) -> str:
    """A file's text (undecodable bytes kept as surrogate escapes), or nats-server's error for it."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except IsADirectoryError:
        raise ConfigError(f"read {path}: {_errno_text(errno.EISDIR)}") from None
    except OSError as exc:
        raise ConfigError(f"open {path}: {_errno_text(exc.errno)}") from None
    return data.decode("utf-8", "surrogateescape")
