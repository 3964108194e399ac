"""How much of a body Go's streaming JSON decoder has read when it reports an error.

nats-server reads API requests through ``json.NewDecoder(bytes.NewReader(body))``.
That decoder (Go's ``jsontext.decodeBuffer``) reads the body into a buffer
that starts at 64 bytes and doubles while one value is being read, so a
syntax error only sees the bytes read so far: a two-byte ``é`` whose first
byte is the last one in the buffer is reported as ``'\\xc3'``, one byte
long, at an offset one less than the whole rune would give.
"""

from __future__ import annotations

INITIAL_CAPACITY = 64
MAX_GROWING_CAPACITY = 4 << 10  # Go's maxBufferSize
GROWTH_FACTOR = 2


class DecoderWindow:
    """The part of a body Go's decoder holds: ``base`` to ``end``, in a buffer of ``capacity`` bytes.

    Mirrors ``decodeBuffer.fetch``: each read fills the buffer after
    keeping what follows the previous value; the buffer doubles while it is
    small and far behind, or when one value fills three quarters of it.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.base = 0
        self.end = 0
        self.capacity = 0
        self.previous_end = 0  # where the last value read ended (Go's prevStart == prevEnd)

    def end_seeing(self, index: int) -> int:
        """The end of the buffer once the decoder has read far enough to look at ``index``."""
        while self.end <= index < self.total:
            self._fetch()
        return self.end

    def value_read(self, end: int) -> None:
        """A value ended at ``end``; the next read keeps only what follows it."""
        self.previous_end = end

    def _fetch(self) -> None:
        if self.capacity == 0:
            self.capacity = INITIAL_CAPACITY
        kept_from_start = self.previous_end == self.base
        grow = self.capacity <= MAX_GROWING_CAPACITY // GROWTH_FACTOR and self.capacity < self.previous_end // 2
        grow = grow or (kept_from_start and self.end - self.base >= 3 * self.capacity // 4)
        if grow:
            self.capacity *= GROWTH_FACTOR
        self.base = self.previous_end
        self.end = min(self.total, self.base + self.capacity)
