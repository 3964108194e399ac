"""One connection's protocol bytes in both directions, kept when a server runs with ``transcripts=True``."""

from __future__ import annotations


class Transcript:
    """The bytes one connection sent (``"in"``) and received (``"out"``), in order (a plain class: a
    dataclass costs its import, and every start imports this module)."""

    __slots__ = ("chunks", "cid")

    def __init__(self, cid: int) -> None:
        self.cid = cid
        self.chunks: list[tuple[str, bytes]] = []

    def record(self, direction: str, data: bytes) -> None:
        self.chunks.append((direction, data))

    def sent_by_client(self) -> bytes:
        return b"".join(data for direction, data in self.chunks if direction == "in")

    def received_by_client(self) -> bytes:
        return b"".join(data for direction, data in self.chunks if direction == "out")

    def lines(self) -> list[str]:
        """Protocol lines prefixed ``C:`` (client) / ``S:`` (server), for reading and grepping."""
        out: list[str] = []
        for direction, data in self.chunks:
            mark = "C: " if direction == "in" else "S: "
            for line in data.decode("utf-8", "replace").split("\r\n"):
                if line:
                    out.append(mark + line)
        return out
