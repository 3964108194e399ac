"""An optional compiled build of the hottest sans-IO modules (with mypyc); plain Python otherwise.

    pip install .                    # pure Python, no compiler needed
    FAKEJS_MYPYC=1 pip install .     # compiled (a C compiler and Python's headers needed)

The build backend (tools/build_backend.py) puts mypy in the build environment
for the compiled build.  Everything else about the package is in pyproject.toml.  The compiled
modules replace their sources' bytecode only: the ``.py`` files ship too, and
the behaviour is the same byte for byte (tests run on both builds).
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from build_backend import compiled  # tools/, put on the path above (the build backend finds it there too)

# The modules on the publish and delivery paths; each compiles as it is written (mypy --strict).
COMPILED = [
    "fakejs/protocol/events.py",
    "fakejs/protocol/parser.py",
    "fakejs/protocol/writer.py",
    "fakejs/protocol/headers.py",
    "fakejs/core/subjects.py",
    "fakejs/core/router.py",
    "fakejs/core/session.py",
    "fakejs/core/clock.py",
    "fakejs/core/read_deferrals.py",
    "fakejs/jetstream/storage/store.py",
    "fakejs/jetstream/storage/subject_index.py",
    "fakejs/jetstream/storage/cursor.py",
    "fakejs/jetstream/storage/message.py",
    "fakejs/jetstream/storage/consumer_state.py",
    "fakejs/jetstream/stream/stream.py",
    "fakejs/jetstream/stream/publish.py",
    "fakejs/jetstream/stream/publish_path.py",
    "fakejs/jetstream/stream/expiry.py",
    "fakejs/jetstream/stream/fast_batch.py",
    "fakejs/jetstream/stream/store_limits.py",
    "fakejs/jetstream/consumer/consumer.py",
    "fakejs/jetstream/consumer/delivery.py",
    "fakejs/jetstream/consumer/ack_tracker.py",
    "fakejs/jetstream/consumer/ack_messages.py",
    "fakejs/jetstream/consumer/waiting_acks.py",
    "fakejs/jetstream/consumer/pull_dispatch.py",
    "fakejs/jetstream/consumer/pull_requests.py",
    "fakejs/jetstream/consumer/position.py",
    "fakejs/testkit/timeline.py",  # a publish's timeline event
]


def extensions() -> list[object]:
    """The compiled modules when FAKEJS_MYPYC is set, else none."""
    if not compiled():
        return []
    from mypyc.build import mypycify  # only here: a plain install needs neither mypy nor a compiler

    return list(mypycify(COMPILED, opt_level="3", group_name="fakejs"))


setup(ext_modules=extensions())
