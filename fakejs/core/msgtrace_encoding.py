"""How a message trace event is encoded: the publisher's ``Accept-Encoding`` header decides.

nats-server (``getCompressionType``) reads the first ``Accept-Encoding``
value of the traced message (the header name with that exact case), in
any case: one that mentions ``snappy`` or ``s2`` gets the event in the
snappy framing format with ``Content-Encoding: snappy``, else one that
mentions ``gzip`` gets it gzipped with ``Content-Encoding: gzip``; any
other value gets it as it is, with ``Content-Encoding: identity``.
Without the header the event is sent without headers.
"""

from __future__ import annotations

from fakejs.protocol import headers as hdrs

__all__ = ["content_encoding", "encode_event"]

CONTENT_ENCODING = "Content-Encoding"
GZIP = "gzip"
SNAPPY = "snappy"
IDENTITY = "identity"


def content_encoding(accept_encoding: str) -> str:
    """The ``Content-Encoding`` an ``Accept-Encoding`` value gets ("" when none was asked)."""
    if not accept_encoding:
        return ""
    wanted = accept_encoding.lower()
    if SNAPPY in wanted or "s2" in wanted:
        return SNAPPY
    if GZIP in wanted:
        return GZIP
    return IDENTITY


def encode_event(document: bytes, accept_encoding: str) -> tuple[bytes | None, bytes]:
    """The trace event's header block and payload for a publisher that sent ``accept_encoding``."""
    encoding = content_encoding(accept_encoding)
    if not encoding:
        return None, document
    if encoding == GZIP:
        # Each compressor loads with the first event a publisher asks it for (start-up time)
        import gzip

        # Go's gzip writer leaves the header's time and name empty, as mtime=0 does.
        document = gzip.compress(document, mtime=0)
    elif encoding == SNAPPY:
        # Each compressor loads with the first event a publisher asks it for (start-up time)
        import cramjam

        document = bytes(cramjam.snappy.compress(document))
    return hdrs.build([(CONTENT_ENCODING, encoding)]), document
