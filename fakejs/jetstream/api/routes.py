"""The ``$JS.API`` route table: every subject fakejs answers, its response type and its handler.

To add an endpoint, write its handler (``handler(js, request, **tokens)``
returning the reply's fields) next to its kind in :mod:`~fakejs.jetstream.api.streams`
or :mod:`~fakejs.jetstream.api.consumers`, and add a row here.  Subjects no
row matches are dropped without a reply, as nats-server does.

Some requests are received by the stream or consumer itself on its own
subscription, as in nats-server (their rows say who serves them): Direct
Get and pull requests are answered there entirely, with status messages;
a consumer reset is handed over to the handler in its row.
"""

from __future__ import annotations

from fakejs.jetstream.api import consumers, leaders, streams
from fakejs.jetstream.api.table import Route, RouteTable

ROUTES = RouteTable(
    (
        # -- the account ------------------------------------------------------------------------
        Route("$JS.API.INFO", "account_info_response", streams.account_info),
        # -- streams ------------------------------------------------------------------------------
        Route("$JS.API.STREAM.CREATE.{stream}", "stream_create_response", streams.create),
        Route("$JS.API.STREAM.UPDATE.{stream}", "stream_update_response", streams.update),
        Route("$JS.API.STREAM.DELETE.{stream}", "stream_delete_response", streams.delete),
        Route("$JS.API.STREAM.INFO.{stream}", "stream_info_response", streams.info),
        Route("$JS.API.STREAM.NAMES", "stream_names_response", streams.names),
        Route("$JS.API.STREAM.LIST", "stream_list_response", streams.listing),
        Route("$JS.API.STREAM.PURGE.{stream}", "stream_purge_response", streams.purge),
        Route("$JS.API.STREAM.MSG.DELETE.{stream}", "stream_msg_delete_response", streams.delete_message),
        Route("$JS.API.STREAM.MSG.GET.{stream}", "stream_msg_get_response", streams.get_message),
        Route("$JS.API.STREAM.SNAPSHOT.{stream}", "stream_snapshot_response", streams.snapshot),
        Route("$JS.API.STREAM.RESTORE.{stream}", "stream_restore_response", streams.restore),
        Route("$JS.API.STREAM.LEADER.STEPDOWN.{stream}", "stream_leader_stepdown_response", leaders.stream_stepdown),
        Route("$JS.API.STREAM.PEER.REMOVE.{stream}", "stream_remove_peer_response", leaders.stream_remove_peer),
        Route("$JS.API.STREAM.PEER.EVACUATE.{stream}", "stream_evacuate_peer_response", streams.needs_cluster),
        Route("$JS.API.STREAM.CANCEL_MOVE.{stream}", "stream_cancel_move_response", streams.needs_cluster),
        # -- served by the stream: Direct Get (subscribed while allow_direct is on) ------------------
        Route("$JS.API.DIRECT.GET.{stream}", "", None, served_by="stream"),
        Route("$JS.API.DIRECT.GET.{stream}.{subject...}", "", None, served_by="stream"),
        # -- consumers (creation checks the API level after decoding its body) --------------------------
        Route("$JS.API.CONSUMER.CREATE.{stream}", "consumer_create_response", consumers.create_ephemeral, level_first=False),
        Route("$JS.API.CONSUMER.CREATE.{stream}.{consumer}", "consumer_create_response", consumers.create_named, level_first=False),
        Route("$JS.API.CONSUMER.CREATE.{stream}.{consumer}.{filter...}", "consumer_create_response", consumers.create_named, level_first=False),
        Route("$JS.API.CONSUMER.DURABLE.CREATE.{stream}.{consumer}", "consumer_create_response", consumers.create_durable, level_first=False),
        Route("$JS.API.CONSUMER.INFO.{stream}.{consumer}", "consumer_info_response", consumers.info),
        Route("$JS.API.CONSUMER.DELETE.{stream}.{consumer}", "consumer_delete_response", consumers.delete),
        Route("$JS.API.CONSUMER.NAMES.{stream}", "consumer_names_response", consumers.names),
        Route("$JS.API.CONSUMER.LIST.{stream}", "consumer_list_response", consumers.listing),
        Route("$JS.API.CONSUMER.PAUSE.{stream}.{consumer}", "consumer_pause_response", consumers.pause),
        Route("$JS.API.CONSUMER.UNPIN.{stream}.{consumer}", "consumer_unpin_response", consumers.unpin),
        Route("$JS.API.CONSUMER.LEADER.STEPDOWN.{stream}.{consumer}", "consumer_leader_stepdown_response", leaders.consumer_stepdown, level_first=False),
        Route("$JS.API.CONSUMER.PEER.REMOVE.{stream}.{consumer}", "consumer_remove_peer_response", streams.needs_cluster, level_first=False),
        Route("$JS.API.CONSUMER.PEER.EVACUATE.{stream}.{consumer}", "consumer_evacuate_peer_response", streams.needs_cluster, level_first=False),
        # -- served by the consumer: pull requests, and resets it hands over ------------------------------
        Route("$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}", "", None, served_by="consumer"),
        Route("$JS.API.CONSUMER.RESET.{stream}.{consumer}", "consumer_reset_response", consumers.reset, served_by="consumer", asset_request="consumer.reset"),
    )
)  # fmt: skip
