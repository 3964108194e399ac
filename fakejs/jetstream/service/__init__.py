"""An account's JetStream: the level that orchestrates streams and consumers.

:class:`~fakejs.jetstream.service.jetstream.JetStream` (``jetstream``) holds
the account's streams, creates, updates and deletes them, and keeps its
usage; ``consumers`` holds the rules for creating, updating and removing
consumers and the retention their acks drive; ``persistence`` keeps the
store directory in step and reads it back on start; ``limits`` checks an
account's JetStream limits, ``server_limits`` holds the server's store
limits, ``banner`` JetStream's start and shutdown log lines; for a
JetStream replicated across a cluster's servers, ``replicated_meta`` (the server's ``_meta_`` member, shared by its
accounts, and its joining), ``replicated`` (an account's share: the checks
before a proposal, the ``cluster`` sections), ``replicated_streams``
(the streams assigned to the server, captured on their leader),
``replicated_consumers`` (the consumers assigned to the server, led by
their group's leader), ``replicated_consumer_rules`` (a consumer create's
checks against the assignments), ``replicated_infos`` (stream and
consumer infos asked of their leaders, for a listing), ``meta_membership``
(the first voters of ``_meta_`` learned from the routes, its Raft
membership kept to the meta state), ``replicated_leaders`` (whom a
step-down hands over to), ``replicated_monitoring`` (``/jsz``'s
``meta_cluster`` and ``ha_assets``), ``replicated_sections`` (the
``cluster`` section of an info), ``replicated_remove`` (``offline`` servers,
``$JS.API.SERVER.REMOVE``, ``META.LEADER.STEPDOWN``), ``replicated_purge``
(``$JS.API.ACCOUNT.PURGE``), ``replicated_moves`` (``PEER.EVACUATE``, a placement changed by an update, ``CANCEL_MOVE``), ``replicated_peers`` (``STREAM.PEER.REMOVE``,
``CONSUMER.PEER.REMOVE``, a stream's replicas changed by an update) and ``replicated_advisories`` (the
leader-elected advisories of streams, consumers and the meta group).  Sits on :mod:`fakejs.jetstream.consumer`,
:mod:`fakejs.jetstream.stream`, :mod:`fakejs.jetstream.storage` and
:mod:`fakejs.jetstream.config`; the ``$JS.API`` layer above attaches to it
(:class:`fakejs.jetstream.JetStreamWithApi` is the two together).
"""

from fakejs.jetstream.service.jetstream import JetStream

__all__ = ["JetStream"]
