"""Reading back the append-only msgpack logs of streams and consumers.

Both logs are written one record at a time with ``os.write``; a process
killed mid-write can leave a partial last record.  :func:`read_log` returns
every whole record and the length of the file they fill, so the caller can
cut the torn tail before appending again.
"""

from __future__ import annotations

from typing import Any

import msgpack


def read_log(path: str) -> tuple[list[Any], int, int]:
    """(whole records, bytes they take, file size); a missing file reads as empty."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return [], 0, 0
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False)
    unpacker.feed(data)
    records: list[Any] = []
    good = 0
    while True:
        try:
            records.append(next(unpacker))
        except StopIteration:
            break
        except (ValueError, msgpack.UnpackException):  # a corrupt tail: keep what came before
            break
        good = unpacker.tell()
    return records, good, len(data)


def truncate_torn_tail(path: str, good: int, size: int) -> None:
    """Cut a partially written last record so later appends stay readable."""
    if good < size:
        with open(path, "r+b") as handle:
            handle.truncate(good)
