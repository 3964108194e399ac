"""A three-node JetStream cluster of either kind with a system account, monitoring and an open global account."""

from __future__ import annotations

from pathlib import Path

from fakejs import ServerOptions
from fakejs.core.configfile.load import load_text
from fakejs.targets.cluster import RealCluster
from fakejs.targets.fake_cluster import FakeCluster

Cluster = FakeCluster | RealCluster
CONFIG = """
accounts { SYS { users: [ {user: sys, password: sys} ] } }
system_account: SYS
authorization { users: [ {user: app, password: app} ] }
no_auth_user: app
"""


def start(kind: str, tmp_path: Path) -> Cluster:
    """Three JetStream nodes ``n1``..``n3`` of cluster ``C`` with monitoring, a system user and an open global account."""
    if kind == "real":
        config = tmp_path / "cluster.conf"
        config.write_text(CONFIG)
        return RealCluster(3, jetstream=True, monitor=True, extra=["-c", str(config)]).start()
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
