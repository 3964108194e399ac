"""Go's ``net/url.Parse``, ``net.SplitHostPort`` and ``net.Listen``'s errors, as far as nats-server shows them.

nats-server reads ``--cluster nats://user:pass@host:port`` with
``url.Parse`` and then ``net.SplitHostPort`` on the host, and prints their
errors as they are (``parse "x": first path segment in URL cannot contain
colon``, ``address h: missing port in address``).  These functions keep
Go's order of checks and its texts; they parse what a route URL can hold
(scheme, user information, host, path) and raise :class:`GoURLError`
with Go's message otherwise.  :func:`parse_host_port` is nats-server's
``parseHostPort`` of an ``advertise`` setting.  :func:`listen_error` is the text of a port
that cannot be listened on, which nats-server logs before it exits.
"""

from __future__ import annotations

import os
import string

from fakejs.gocompat.goquote import quote

_HEX = frozenset(string.hexdigits)
# Characters a host may hold unescaped besides letters and digits (Go's shouldEscape, host mode).
_HOST_SAFE = frozenset("-_.~!$&'()*+,;=:[]<>\"")
# Characters Go's validUserinfo lets through besides letters and digits.
_USERINFO_SAFE = frozenset("-._:~!$&'()*+,;=%@")


class GoURLError(ValueError):
    """A Go error: ``str()`` is the text nats-server prints."""


class GoURL:
    """The parts of a parsed URL a route needs (``password`` None: none given, as Go's ``Password()`` false).

    A plain class: a dataclass costs its import, and every start imports this module (for its listen errors).
    """

    __slots__ = ("host", "opaque", "password", "path", "scheme", "username")

    def __init__(
        self,
        scheme: str = "",
        host: str = "",
        username: str | None = None,
        password: str | None = None,
        path: str = "",
        opaque: str = "",
    ) -> None:
        self.scheme = scheme
        self.host = host  # host[:port], as Go's URL.Host
        self.username = username  # None: no user information at all
        self.password = password
        self.path = path
        self.opaque = opaque


def _unescape(text: str, host: bool) -> str:
    """Go's ``unescape``: %XX sequences decoded; in a host, characters Go would escape are refused."""
    out = bytearray()
    index = 0
    while index < len(text):
        char = text[index]
        if char == "%":
            chunk = text[index : index + 3]
            if len(chunk) < 3 or chunk[1] not in _HEX or chunk[2] not in _HEX:
                raise GoURLError(f'invalid URL escape "{chunk}"')
            if host and int(chunk[1], 16) < 8 and chunk != "%25":  # a host escapes only non-ASCII bytes
                raise GoURLError(f'invalid URL escape "{chunk}"')
            out.append(int(chunk[1:], 16))
            index += 3
            continue
        if host and ord(char) < 0x80 and not (char.isalnum() or char in _HOST_SAFE):
            raise GoURLError(f'invalid character "{char}" in host name')
        out.extend(char.encode())
        index += 1
    return out.decode(errors="surrogateescape")


def _valid_optional_port(port: str) -> bool:
    return port == "" or (port.startswith(":") and all(c in string.digits for c in port[1:]))


def _parse_host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise GoURLError("missing ']' in host")
        port = host[end + 1 :]
        if not _valid_optional_port(port):
            raise GoURLError(f'invalid port "{port}" after host')
    elif ":" in host:
        port = host[host.rfind(":") :]
        if not _valid_optional_port(port):
            raise GoURLError(f'invalid port "{port}" after host')
    return _unescape(host, host=True)


def _parse_authority(authority: str) -> tuple[str, str | None, str | None]:
    at = authority.rfind("@")
    host = _parse_host(authority[at + 1 :])
    if at < 0:
        return host, None, None
    userinfo = authority[:at]
    if not all(c.isascii() and (c.isalnum() or c in _USERINFO_SAFE) for c in userinfo):
        raise GoURLError("net/url: invalid userinfo")
    if ":" not in userinfo:
        return host, _unescape(userinfo, host=False), None
    user, _, password = userinfo.partition(":")
    return host, _unescape(user, host=False), _unescape(password, host=False)


def _scheme(raw: str) -> tuple[str, str]:
    """Go's ``getScheme``: (scheme, rest); no scheme when the text does not start like one."""
    for index, char in enumerate(raw):
        if char.isascii() and char.isalpha():
            continue
        if char.isascii() and (char.isdigit() or char in "+-."):
            if index == 0:
                return "", raw
            continue
        if char == ":":
            if index == 0:
                raise GoURLError("missing protocol scheme")
            return raw[:index], raw[index + 1 :]
        return "", raw
    return "", raw


def _parse(raw: str) -> GoURL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise GoURLError("net/url: invalid control character in URL")
    scheme, rest = _scheme(raw)
    scheme = scheme.lower()
    rest = rest[:-1] if rest.endswith("?") and rest.count("?") == 1 else rest.partition("?")[0]
    if not rest.startswith("/"):
        if scheme:
            return GoURL(scheme=scheme, opaque=rest)
        if ":" in rest.partition("/")[0]:
            raise GoURLError("first path segment in URL cannot contain colon")
    host, username, password = "", None, None
    if rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        host, username, password = _parse_authority(authority)
    return GoURL(scheme, host, username, password, _unescape(rest, host=False))


def parse_url(raw: str) -> GoURL:
    """Go's ``url.Parse``; :class:`GoURLError` reads ``parse "RAW": reason`` as Go's ``*url.Error``."""
    text, hashed, fragment = raw.partition("#")
    try:
        parsed = _parse(text)
    except GoURLError as exc:
        raise GoURLError(f'parse "{text}": {exc}') from None
    if hashed:
        try:
            _unescape(fragment, host=False)
        except GoURLError as exc:  # Go names the whole text when the fragment is at fault
            raise GoURLError(f'parse "{raw}": {exc}') from None
    return parsed


def split_host_port(hostport: str) -> tuple[str, str]:
    """Go's ``net.SplitHostPort``, with its ``address X: reason`` errors."""

    def fail(reason: str) -> GoURLError:
        return GoURLError(f"address {hostport}: {reason}" if hostport else reason)

    colon = hostport.rfind(":")
    if colon < 0:
        raise fail("missing port in address")
    start, after = 0, 0
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            raise fail("missing ']' in address")
        if end + 1 == len(hostport):
            raise fail("missing port in address")
        if end + 1 != colon:
            raise fail("too many colons in address" if hostport[end + 1] == ":" else "missing port in address")
        host = hostport[1:end]
        start, after = 1, end + 1
    else:
        host = hostport[:colon]
        if ":" in host:
            raise fail("too many colons in address")
    if "[" in hostport[start:]:
        raise fail("unexpected '[' in address")
    if "]" in hostport[after:]:
        raise fail("unexpected ']' in address")
    return host, hostport[colon + 1 :]


def parse_host_port(text: str, default_port: int) -> tuple[str, int]:
    """nats-server's ``parseHostPort``: ``host:port`` (the port ``default_port`` when missing, 0 or -1).

    Raises :class:`GoURLError` with Go's text (``strconv.Atoi: parsing "x": invalid syntax``).
    """
    if not text:
        raise GoURLError("no hostport specified")
    try:
        host, port_text = split_host_port(text)
    except GoURLError as exc:
        if "missing port" not in str(exc):
            raise
        host, port_text = split_host_port(f"{text}:{default_port}")
    port_text = port_text.strip()
    digits = port_text[1:] if port_text[:1] in "+-" else port_text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise GoURLError(f"strconv.Atoi: parsing {quote(port_text.encode())}: invalid syntax")
    port = int(port_text)
    if not -(2**63) <= port < 2**63:
        raise GoURLError(f"strconv.Atoi: parsing {quote(port_text.encode())}: value out of range")
    return host.strip(), default_port if port in (0, -1) else port


class ListenError(OSError):
    """A port that cannot be listened on (or be announced), with the line nats-server logs for it before it exits."""


def listen_error(host: str, port: int, error: OSError) -> str:
    """``net.Listen("tcp", host:port)``'s error text: ``listen tcp 127.0.0.1:4222: bind: address already in use``.

    Go names the system error in lower case (``syscall.Errno``'s table);
    an IPv6 host is bracketed.
    """
    reason = os.strerror(error.errno) if error.errno else str(error)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return f"listen tcp {address}: bind: {reason[:1].lower()}{reason[1:]}"
