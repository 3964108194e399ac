"""A three-node JetStream cluster with a system account, monitoring and an open global account.

Its kinds: ``real`` (nats-server processes), ``fake`` (fakejs's in-process
cluster) and ``processes`` (fakejs processes from the same configuration
file); fakejs's nodes each run their share of a JetStream replicated across
them, in one process or in several.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fakejs import ServerOptions
from fakejs.core.configfile.load import load_text
from fakejs.targets.cluster import RealCluster
from fakejs.targets.fake_cluster import FakeCluster

Cluster = FakeCluster | RealCluster  # FakeProcesses is a RealCluster
CONFIG = """
accounts { SYS { users: [ {user: sys, password: sys} ] } }
system_account: SYS
authorization { users: [ {user: app, password: app} ] }
no_auth_user: app
"""


class FakeProcesses(RealCluster):
    """Three fakejs processes in the shape of :class:`RealCluster` (same flags, names and configuration file)."""

    kind = "processes"

    def __init__(self, extra: list[str]) -> None:
        super().__init__(3, jetstream=True, monitor=True, extra=extra)
        self.processes.kinds = ["fake"] * 3


def start(kind: str, tmp_path: Path) -> Cluster:
    """Three JetStream nodes ``n1``..``n3`` of cluster ``C`` with monitoring, a system user and an open global account."""
    if kind in ("real", "processes"):
        config = tmp_path / "cluster.conf"
        config.write_text(CONFIG)
        extra = ["-c", str(config)]
        return (
            RealCluster(3, jetstream=True, monitor=True, extra=extra) if kind == "real" else FakeProcesses(extra)
        ).start()
    loaded = load_text(CONFIG, base=ServerOptions())
    assert not loaded.problem_text(), loaded.problem_text()
    options = loaded.options
    return FakeCluster(
        3,
        jetstream=True,
        monitor=True,
        accounts=options.accounts,
        system_account=options.system_account,
        users=options.users,
        no_auth_user=options.no_auth_user,
    ).start()


@contextmanager
def running(kind: str, tmp_path: Path) -> Iterator[Cluster]:
    """:func:`start`'s cluster, stopped when the block is left."""
    cluster = start(kind, tmp_path)
    try:
        yield cluster
    finally:
        cluster.stop()
