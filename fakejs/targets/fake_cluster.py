"""The fakejs cluster test handle: a :class:`~fakejs.server.threaded_cluster.ThreadedCluster` and its clock.

:class:`FakeCluster` is what the pytest plugin's ``fakejs_cluster`` fixture
gives a test: ``urls``, ``url(node)``, failures on cue (``kill``,
``restart``, ``partition``, ``heal``, ``drop_leafs``, ``restore_leafs``) and, with ``clock="manual"``, one
:class:`~fakejs.testkit.clock.ManualClock` shared by every node, moved by
``advance``.  :class:`~fakejs.targets.cluster.RealCluster` has the same shape
for real nats-server processes; there the fakejs-only parts raise
:class:`~fakejs.targets.fake.FakeOnly`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fakejs.core.failures import ServerError
from fakejs.server.threaded_cluster import Node, ThreadedCluster
from fakejs.targets.fake import FakeOnly
from fakejs.testkit.clock import ManualClock


class FakeCluster:
    """``size`` fakejs nodes on a background thread (nodes are indexes, ``"n2"`` names or servers).

    ``jetstream`` and the other ``options`` go to every node's server options.
    """

    kind = "fake"

    def __init__(
        self,
        size: int = 3,
        *,
        clock: str | None = None,
        autojump: float | None = None,
        name: str = "C",
        seed: int | None = None,
        jetstream: bool = False,
        tags: Any = (),
        monitor: bool = False,
        **options: Any,
    ) -> None:
        self.manual = clock == "manual"
        self._clock = ManualClock(autojump_threshold=autojump) if self.manual else None
        if monitor:
            options.setdefault("http_port", 0)  # a free monitoring port for each node
        self.threaded = ThreadedCluster(
            size, name=name, clock=self._clock, seed=seed, jetstream=jetstream, tags=tags, **options
        )

    def start(self) -> FakeCluster:
        self.threaded.start()
        return self

    def stop(self) -> None:
        self.threaded.stop()

    # -- the nodes -----------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self.threaded.size

    @property
    def urls(self) -> list[str]:
        return self.threaded.urls

    def url(self, node: Node) -> str:
        return self.threaded.url(node)

    def server(self, node: Node) -> Any:
        """A node's :class:`~fakejs.server.server.Server` (touch it only through :meth:`call`)."""
        return self.threaded.server(node)

    def take_errors(self) -> list[ServerError]:
        """Exceptions any node's own handlers raised since the last call."""
        return self.threaded.take_errors()

    def timeline(self, node: str | None = None, **filters: Any) -> list[dict[str, Any]]:
        """What every node (or ``node``) did, oldest first, each event with its ``node`` (see
        :meth:`fakejs.server.local_cluster.Cluster.timeline`)."""
        events: list[dict[str, Any]] = self.call(lambda: self.threaded.cluster.timeline(node, **filters))
        return events

    def timeline_document(self, node: str | None = None, **filters: Any) -> dict[str, Any]:
        """What the cluster's timeline page shows (see :meth:`fakejs.server.local_cluster.Cluster.timeline_document`)."""
        found: dict[str, Any] = self.call(lambda: self.threaded.cluster.timeline_document(node, **filters))
        return found

    def timeline_page(self, title: str = "", node: str | None = None, **filters: Any) -> str:
        """The cluster's timeline as one self-contained HTML page, a group of lanes per node."""
        page: str = self.call(lambda: self.threaded.cluster.timeline_page(title, node, **filters))
        return page

    def call(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run ``func(*args)`` on the cluster's thread (where server state may be touched)."""
        return self.threaded.call(func, *args)

    # -- failures on cue ------------------------------------------------------------------------

    def kill(self, node: Node) -> None:
        """A crash of the node (nats-server's SIGKILL)."""
        self.threaded.kill(node)

    def step_down(self, stream: str, consumer: str = "") -> str:
        """A JetStream stream's (or consumer's) leader steps down on cue; the new leader's name."""
        return self.threaded.step_down(stream, consumer)

    def move_leader(self, stream: str, node: Node, consumer: str = "") -> str:
        """Move a JetStream leader to ``node``."""
        return self.threaded.move_leader(stream, node, consumer)

    def shutdown(self, node: Node) -> None:
        """An orderly stop of the node (nats-server's SIGTERM)."""
        self.threaded.shutdown(node)

    def scenario(self, name_or_path: str) -> dict[str, Any]:
        """Start a scenario on the cluster: a shipped name or a path (:mod:`fakejs.server.cluster_scenarios`)."""
        return self.threaded.start_scenario(name_or_path)

    start_scenario = scenario

    def monitor_url(self, node: Node) -> str:
        """The node's monitoring port (``monitor=True``)."""
        server = self.threaded.server(node)
        if server.http_url is None:
            raise FakeOnly("start the cluster with monitor=True to have monitoring ports")
        return str(server.http_url)

    def restart(self, node: Node, down_for: float = 0.0) -> None:
        """Bring a node back; ``down_for`` is cluster time (on a manual clock it is advanced meanwhile)."""
        if down_for > 0 and self._clock is not None:
            self.threaded.kill(node)
            self.advance(down_for)
            down_for = 0.0
        self.threaded.restart(node, down_for)

    def partition(self, *groups: Iterable[Node]) -> None:
        self.threaded.partition(*groups)

    def heal(self) -> None:
        self.threaded.heal()

    def drop_leafs(self, node: Node | None = None, remote: str = "*", until_restored: bool = False) -> dict[str, Any]:
        """Drop the leaf links of ``node`` (of every node with leaf connections when None), as the
        ``drop_leafs`` control action does on one server; ``until_restored`` keeps them down."""
        return self.threaded.drop_leafs(node, remote, until_restored)

    def restore_leafs(self, node: Node | None = None) -> dict[str, Any]:
        """Let the leaf links :meth:`drop_leafs` keeps down come up again (every node's when ``node`` is None)."""
        return self.threaded.restore_leafs(node)

    # -- the clock ------------------------------------------------------------------------------

    def advance(self, seconds: float) -> int:
        """Move the shared manual clock forward, firing every node's timers due; returns how many fired."""
        return int(self.call(self._manual_clock("advance").advance, seconds))

    def advance_to_next(self) -> float | None:
        """Move the shared clock to the next timer that does work on any node; the seconds moved (``None``: none)."""
        seconds: float | None = self.call(self._manual_clock("advance_to_next").advance_to_next)
        return seconds

    def advance_until(self, predicate: Callable[[], Any], limit: float = 3600.0) -> float:
        """Move the shared clock timer by timer until ``predicate()`` (run on the cluster's thread) holds."""
        clock = self._manual_clock("advance_until")
        return float(self.call(clock.advance_until, predicate, limit))

    def _manual_clock(self, method: str) -> ManualClock:
        if self._clock is None:
            raise FakeOnly(f"{method}() needs a manual clock: use clock='manual'")
        return self._clock

    def now(self) -> float:
        return float(self.call(self.threaded.cluster.clock.monotonic))
