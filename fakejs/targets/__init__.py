"""The two servers a test can run against: fakejs on a thread, and a real nats-server process.

``fake`` holds :class:`FakeJS`, the fakejs test handle; ``real`` holds
:class:`ServerProcess`, the one launcher of
server subprocesses (the real nats-server, or ``python -m fakejs``), and
:class:`RealNatsServer`, the real server with the shape of :class:`FakeJS`;
``fake_cluster`` holds :class:`FakeCluster`, a fakejs cluster
on a thread, and ``cluster`` :class:`ProcessCluster`, the
launcher of clusters of server subprocesses, and :class:`RealCluster`, a real
nats-server cluster with the shape of :class:`FakeCluster`;
``cluster_probe`` tells whether a cluster carries messages, ``handles``
gives the plugin's handles a stable import path, and ``certificates`` makes
the certificates of ``tls=True``.
The pytest plugin, the parity campaign and this repository's tests and
benchmarks all start servers through here.

May import :mod:`fakejs.server`, :mod:`fakejs.testkit` and everything below
them; only the entry points and :mod:`fakejs.parity` import this package.
"""

from fakejs.targets.cluster import ProcessCluster, RealCluster
from fakejs.targets.fake import FakeJS, FakeOnly
from fakejs.targets.fake_cluster import FakeCluster
from fakejs.targets.real import NatsServerNotFound, RealNatsServer, ServerProcess, find_nats_server

__all__ = [
    "FakeCluster",
    "FakeJS",
    "FakeOnly",
    "NatsServerNotFound",
    "ProcessCluster",
    "RealCluster",
    "RealNatsServer",
    "ServerProcess",
    "find_nats_server",
]
