"""A fakejs cluster on a background thread, for synchronous test code.

::

    with ThreadedCluster(size=3) as cluster:
        run_my_app(nats_urls=cluster.urls)
        cluster.kill("n2")          # returns once the others dropped their routes to it
        cluster.restart("n2")       # back on its ports, meshed again

The :class:`~fakejs.server.local_cluster.Cluster` runs on its own asyncio
loop on a daemon thread; every method here runs its namesake on that loop
and waits for it.  :meth:`call` runs any function there (to advance a
shared manual clock, say) and :meth:`run` any coroutine.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from fakejs.core.failures import ServerError
from fakejs.server.local_cluster import Cluster
from fakejs.server.loop_thread import LoopThread
from fakejs.server.server import Server

__all__ = ["ThreadedCluster"]

T = TypeVar("T")
Node = int | str | Server

# Real seconds a cluster operation may take (a kill or restart waits until the nodes have meshed again).
TIMEOUT = 30.0


def distinct(errors: list[ServerError]) -> list[ServerError]:
    """Each exception once: a timer on the shared clock that raises is recorded by every node."""
    seen: set[int] = set()
    kept = []
    for error in errors:
        if id(error.exception) not in seen:
            seen.add(id(error.exception))
            kept.append(error)
    return kept


class ThreadedCluster:
    """Same arguments as :class:`~fakejs.server.local_cluster.Cluster`."""

    def __init__(self, size: int = 3, **kwargs: Any) -> None:
        self.cluster = Cluster(size, **kwargs)
        self._thread = LoopThread("cluster", "fakejs-cluster")

    # -- the nodes (read on the cluster's loop once it runs) -------------------------------

    @property
    def size(self) -> int:
        return self.cluster.size

    @property
    def urls(self) -> list[str]:
        """Every node's client URL (a client takes the list as its server pool)."""
        return self._read(lambda: self.cluster.urls)

    def url(self, node: Node) -> str:
        return self._read(lambda: self.cluster.url(self.cluster.index(node)))

    def server(self, node: Node) -> Server:
        """A node's server (touch its state only through :meth:`call`)."""
        return self.cluster.servers[self.cluster.index(node)]

    def index(self, node: Node) -> int:
        return self.cluster.index(node)

    @property
    def errors(self) -> list[ServerError]:
        """What any node's handlers raised (see :attr:`Server.errors`), oldest first per node."""
        return self._read(lambda: distinct(self.cluster.errors))

    def take_errors(self) -> list[ServerError]:
        """Every node's recorded errors, forgetting them."""
        return self._read(
            lambda: distinct([error for server in self.cluster.servers for error in server.take_errors()])
        )

    def meshed(self) -> bool:
        return self._read(self.cluster.meshed)

    def _read(self, func: Callable[[], T]) -> T:
        """``func()`` on the cluster's loop while it runs, directly before and after."""
        return func() if self._thread.loop is None else self.call(func)

    # -- failures on cue ------------------------------------------------------------------------

    def kill(self, node: Node, timeout: float = TIMEOUT) -> None:
        """Take a node down (see :meth:`Cluster.kill`)."""
        self.run(self.cluster.kill(self.cluster.index(node)), timeout)

    def step_down(self, stream: str, consumer: str = "", timeout: float = TIMEOUT) -> str:
        """A JetStream leader steps down on cue (see :meth:`Cluster.step_down`)."""
        return self.call(self.cluster.step_down, stream, consumer, timeout=timeout)

    def move_leader(self, stream: str, node: Node, consumer: str = "", timeout: float = TIMEOUT) -> str:
        """Move a JetStream leader to ``node`` (see :meth:`Cluster.move_leader`)."""
        return self.call(self.cluster.move_leader, stream, self.cluster.index(node), consumer, timeout=timeout)

    def shutdown(self, node: Node, timeout: float = TIMEOUT) -> None:
        """An orderly stop of a node (see :meth:`Cluster.shutdown`)."""
        self.run(self.cluster.shutdown(self.cluster.index(node)), timeout)

    def restart(self, node: Node, down_for: float = 0.0, timeout: float = TIMEOUT) -> None:
        """Bring a node back on its ports (see :meth:`Cluster.restart`).

        ``down_for`` is cluster time: on a manual clock, something must
        advance it meanwhile (an autojumping clock does so by itself).
        """
        self.run(self.cluster.restart(self.cluster.index(node), down_for), timeout)

    def partition(self, *groups: Iterable[Node], timeout: float = TIMEOUT) -> None:
        """Cut the cluster into groups (see :meth:`Cluster.partition`)."""
        named = [[self.cluster.index(node) for node in group] for group in groups]
        self.run(self.cluster.partition(*named), timeout)

    def heal(self, timeout: float = TIMEOUT) -> None:
        self.run(self.cluster.heal(), timeout)

    def drop_leafs(
        self, node: Node | None = None, remote: str = "*", until_restored: bool = False, timeout: float = TIMEOUT
    ) -> dict[str, dict[str, Any]]:
        """Drop the leaf links of a node, or of every node (see :meth:`Cluster.drop_leafs`)."""
        index = None if node is None else self.cluster.index(node)
        return self.call(self.cluster.drop_leafs, index, remote, until_restored, timeout=timeout)

    def restore_leafs(self, node: Node | None = None, timeout: float = TIMEOUT) -> dict[str, dict[str, Any]]:
        """Let the dropped leaf links come up again (see :meth:`Cluster.restore_leafs`)."""
        index = None if node is None else self.cluster.index(node)
        return self.call(self.cluster.restore_leafs, index, timeout=timeout)

    def start_scenario(self, name_or_path: str | None = None, text: str | None = None) -> dict[str, Any]:
        """Start a scenario on the cluster (see :meth:`Cluster.start_scenario`)."""
        return self.run(self.cluster.start_scenario(name_or_path, text))

    def wait_meshed(self, timeout: float = TIMEOUT) -> None:
        self.run(self.cluster.wait_meshed(timeout), timeout + 1)

    # -- the thread -----------------------------------------------------------------------------

    def start(self, timeout: float = TIMEOUT) -> ThreadedCluster:
        """Start the thread and wait until every node serves and the nodes are meshed."""

        async def begin() -> None:
            await self.cluster.start()

        async def end() -> None:
            await self.cluster.stop()

        try:
            self._thread.start(begin, end, timeout, end_if_refused=True)
        except BaseException:
            self.stop()
            raise
        return self

    def call(self, func: Callable[..., T], *args: Any, timeout: float = TIMEOUT) -> T:
        """Run ``func(*args)`` on the cluster's loop and return its result."""
        return self._thread.call(func, *args, timeout=timeout)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = TIMEOUT) -> T:
        """Run a coroutine on the cluster's loop and return its result."""
        return self._thread.run(coro, timeout)

    def stop(self, timeout: float = TIMEOUT) -> None:
        """Stop every node and join the thread."""
        self._thread.stop(timeout)

    def __enter__(self) -> ThreadedCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<ThreadedCluster {self.cluster.name!r} of {self.size}>"
