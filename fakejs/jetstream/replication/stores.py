"""Where a member keeps its log: a directory under the server's store directory, or memory.

nats-server keeps each group's log under its system account,
``<store_dir>/jetstream/$SYS/_js_/<group>/``.  fakejs keeps its own files
under ``<store_dir>/fakejs/`` (its streams are in ``fakejs/streams/``), in
its own format, so a group's log is in ``<store_dir>/fakejs/$SYS/_js_/<group>/``
(:func:`group_directory`): nats-server's layout, where nats-server would never
look.  A group of a memory stream keeps its log in memory, as nats-server's
does, and starts empty after a restart.
"""

from __future__ import annotations

import os

from fakejs.jetstream.raft import DirectoryStorage, LogStorage, MemoryStorage

FAKEJS_DIR = "fakejs"
GROUPS_DIR = "_js_"  # nats-server's defaultStoreDirName


def group_directory(store_dir: str, system_account: str, group: str) -> str:
    """The directory of ``group``'s log under the server's store directory."""
    return os.path.join(store_dir, FAKEJS_DIR, system_account, GROUPS_DIR, group)


def open_storage(directory: str | None, *, fsync: bool = True) -> LogStorage:
    """A :class:`~fakejs.jetstream.raft.DirectoryStorage` in ``directory``, or memory when it is ``None``."""
    if directory is None:
        return MemoryStorage()
    return DirectoryStorage(directory, fsync=fsync)


def close_storage(storage: LogStorage) -> None:
    """Let go of the files a store holds open (memory holds none)."""
    if isinstance(storage, DirectoryStorage):
        storage.close()
