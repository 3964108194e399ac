"""The handles the pytest plugin gives tests: :class:`FakeJS` and :class:`RealNatsServer`.

They live in :mod:`fakejs.targets.fake` and :mod:`fakejs.targets.real`; this
module keeps their import path stable (``fakejs.targets`` exports them too).
"""

from fakejs.targets.fake import FakeJS, FakeOnly
from fakejs.targets.real import RealNatsServer, find_nats_server

__all__ = ["FakeJS", "FakeOnly", "RealNatsServer", "find_nats_server"]
