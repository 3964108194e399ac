"""The ``$JS.API`` route table: every subject fakejs answers, one row each, with all the dispatcher needs.

To add an endpoint, write its handler (``handler(js, request, **tokens)``
returning the reply's fields) next to its kind in :mod:`~fakejs.jetstream.api.streams`
or :mod:`~fakejs.jetstream.api.consumers`, and add a row here.  Subjects no
row matches are dropped without a reply, as nats-server does.

A row (:class:`~fakejs.jetstream.api.table.Route`) holds:

* ``pattern``: the subject, ``{name}`` for one named token and ``{name...}``
  for the rest of the subject; the handler gets them as keyword arguments;
* ``response_type``: the reply's ``type`` without ``io.nats.jetstream.api.v1.``;
* ``handler``: decodes the request, calls the domain, returns the reply's fields;
* ``served_by``: ``"api"`` (the default), or ``"stream"`` / ``"consumer"``
  for a subject the asset receives on its own subscription, as in
  nats-server: Direct Get and pull requests are answered there entirely,
  with status messages (no handler; ``declined_prefix`` is the subject
  prefix the dispatcher leaves to them, so a missing asset means "no
  responders"), a consumer reset is handed over as ``asset_request`` to
  the handler in its row;
* ``level_first``: check ``Nats-Required-Api-Level`` before the handler
  runs (False: the handler checks it, or nothing does);
* ``error_extras``: the fields an error reply carries after ``error`` (Go
  zero values of the response struct's fields without ``omitempty``);
* ``info_queue``: nats-server queues the request on its info queue, not
  its request queue (:mod:`~fakejs.jetstream.api.queue_limits`);
* ``offline_answer``: in a cluster, an asset whose server shut down in
  order is answered "offline" (other requests to an asset without a leader
  get no answer);
* ``proposed``: in a cluster the request is carried out as a meta
  proposal, ``"always"`` or only for a ``"replicated"`` stream: its audit
  advisory leaves the request body out.

Rows of one response type agree on the last four
(``tests/unit/test_api_routes.py`` checks the table's consistency).
"""

from __future__ import annotations

from fakejs.jetstream.api import consumers, leaders, streams
from fakejs.jetstream.api.table import Route, RouteTable

# nats-server's ``ApiPaged``: the paging fields a list reply carries, errors included.
PAGED = {"total": 0, "offset": 0, "limit": 0}
NO_CONSUMERS = {**PAGED, "consumers": []}
ZERO_TIME = "0001-01-01T00:00:00Z"  # Go's zero ``time.Time``
# nats-server's import lets these through to the stream's or consumer's own subscription.
DIRECT_GET_PREFIX = "$JS.API.DIRECT.GET"  # ``jsDirectGetPre``
NEXT_PREFIX = "$JS.API.CONSUMER.MSG.NEXT."  # ``jsRequestNextPre``

ROUTES = RouteTable(
    (
        # -- the account ------------------------------------------------------------------------
        Route("$JS.API.INFO", "account_info_response", streams.account_info, info_queue=True),
        # -- streams ------------------------------------------------------------------------------
        Route("$JS.API.STREAM.CREATE.{stream}", "stream_create_response", streams.create, proposed="always"),
        Route("$JS.API.STREAM.UPDATE.{stream}", "stream_update_response", streams.update, proposed="always"),
        Route("$JS.API.STREAM.DELETE.{stream}", "stream_delete_response", streams.delete, proposed="always"),
        Route(
            "$JS.API.STREAM.INFO.{stream}", "stream_info_response", streams.info,
            error_extras=PAGED, info_queue=True, offline_answer=True,
        ),
        Route(
            "$JS.API.STREAM.NAMES", "stream_names_response", streams.names,
            error_extras={**PAGED, "streams": None}, info_queue=True,
        ),
        Route(
            "$JS.API.STREAM.LIST", "stream_list_response", streams.listing,
            error_extras={**PAGED, "streams": []}, info_queue=True,
        ),
        Route(
            "$JS.API.STREAM.PURGE.{stream}", "stream_purge_response", streams.purge,
            error_extras={"purged": 0}, proposed="replicated",
        ),
        Route("$JS.API.STREAM.MSG.DELETE.{stream}", "stream_msg_delete_response", streams.delete_message),
        Route("$JS.API.STREAM.MSG.GET.{stream}", "stream_msg_get_response", streams.get_message),
        Route("$JS.API.STREAM.SNAPSHOT.{stream}", "stream_snapshot_response", streams.snapshot),
        Route("$JS.API.STREAM.RESTORE.{stream}", "stream_restore_response", streams.restore),
        Route("$JS.API.STREAM.LEADER.STEPDOWN.{stream}", "stream_leader_stepdown_response", leaders.stream_stepdown),
        Route("$JS.API.STREAM.PEER.REMOVE.{stream}", "stream_remove_peer_response", leaders.stream_remove_peer),
        Route("$JS.API.STREAM.PEER.EVACUATE.{stream}", "stream_evacuate_peer_response", streams.needs_cluster),
        Route("$JS.API.STREAM.CANCEL_MOVE.{stream}", "stream_cancel_move_response", streams.needs_cluster),
        # -- served by the stream: Direct Get (subscribed while allow_direct is on) ------------------
        Route("$JS.API.DIRECT.GET.{stream}", "", None, served_by="stream", declined_prefix=DIRECT_GET_PREFIX),
        Route("$JS.API.DIRECT.GET.{stream}.{subject...}", "", None, served_by="stream", declined_prefix=DIRECT_GET_PREFIX),
        # -- consumers (creation checks the API level after decoding its body) --------------------------
        Route("$JS.API.CONSUMER.CREATE.{stream}", "consumer_create_response", consumers.create_ephemeral, level_first=False, proposed="always"),
        Route("$JS.API.CONSUMER.CREATE.{stream}.{consumer}", "consumer_create_response", consumers.create_named, level_first=False, proposed="always"),
        Route("$JS.API.CONSUMER.CREATE.{stream}.{consumer}.{filter...}", "consumer_create_response", consumers.create_named, level_first=False, proposed="always"),
        Route("$JS.API.CONSUMER.DURABLE.CREATE.{stream}.{consumer}", "consumer_create_response", consumers.create_durable, level_first=False, proposed="always"),
        Route("$JS.API.CONSUMER.INFO.{stream}.{consumer}", "consumer_info_response", consumers.info, info_queue=True, offline_answer=True),
        Route("$JS.API.CONSUMER.DELETE.{stream}.{consumer}", "consumer_delete_response", consumers.delete, proposed="always"),
        Route("$JS.API.CONSUMER.NAMES.{stream}", "consumer_names_response", consumers.names, error_extras=NO_CONSUMERS, info_queue=True),
        Route("$JS.API.CONSUMER.LIST.{stream}", "consumer_list_response", consumers.listing, error_extras=NO_CONSUMERS, info_queue=True),
        Route(
            "$JS.API.CONSUMER.PAUSE.{stream}.{consumer}", "consumer_pause_response", consumers.pause,
            error_extras={"paused": False, "pause_until": ZERO_TIME},
        ),
        Route("$JS.API.CONSUMER.UNPIN.{stream}.{consumer}", "consumer_unpin_response", consumers.unpin),
        Route("$JS.API.CONSUMER.LEADER.STEPDOWN.{stream}.{consumer}", "consumer_leader_stepdown_response", leaders.consumer_stepdown, level_first=False),
        Route("$JS.API.CONSUMER.PEER.REMOVE.{stream}.{consumer}", "consumer_remove_peer_response", leaders.consumer_remove_peer, level_first=False),
        Route("$JS.API.CONSUMER.PEER.EVACUATE.{stream}.{consumer}", "consumer_evacuate_peer_response", streams.needs_cluster, level_first=False),
        # -- served by the consumer: pull requests, and resets it hands over ------------------------------
        Route("$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}", "", None, served_by="consumer", declined_prefix=NEXT_PREFIX),
        Route(
            "$JS.API.CONSUMER.RESET.{stream}.{consumer}", "consumer_reset_response", consumers.reset,
            served_by="consumer", asset_request="consumer.reset", error_extras={"reset_seq": 0},
        ),
    )
)  # fmt: skip
