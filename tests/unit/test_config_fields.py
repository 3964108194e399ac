"""Stream and consumer configs are declared once, as tables of fields; what derives from the tables.

Each config's typed dict must name the table's fields in the table's order, and the JSON written
for a set of configs covering every way a field is written (always, omitempty, nested parts, times,
metadata) is held here byte for byte: each sample gives the JSON with the server's dynamic metadata,
the JSON without it, and the form kept in JSON files.
"""

from __future__ import annotations

import copy
import json
import typing
from typing import Any

import pytest

from fakejs.core.options import API_LEVEL, NATS_VERSION
from fakejs.gocompat import gojson
from fakejs.gocompat.gotime import GoTime
from fakejs.jetstream.config import consumer, stream
from fakejs.jetstream.config.fields import ConfigTable

SECOND = 1_000_000_000
T1 = GoTime(1_700_000_000_123_456_789)
T2 = GoTime(1_700_000_100_000_000_000, 3600)


def stream_samples() -> dict[str, dict[str, Any]]:
    """Stream configs (over the zero config) covering each field's ways of being written."""
    return {
        "named": {"name": "S"},
        "defaulted": {
            "name": "S",
            "subjects": ["a", "b.>"],
            "max_consumers": -1,
            "max_msgs": -1,
            "max_bytes": -1,
            "max_msgs_per_subject": -1,
            "max_msg_size": -1,
            "storage": "file",
            "num_replicas": 1,
            "duplicate_window": 120 * SECOND,
            "metadata": {"_nats.req.level": "0"},
        },
        "everything": {
            "name": "S",
            "description": "all <set> & more",
            "subjects": ["a"],
            "retention": "workqueue",
            "max_consumers": 5,
            "max_msgs": 10,
            "max_bytes": 1024,
            "max_age": 60 * SECOND,
            "max_msgs_per_subject": 2,
            "max_msg_size": 128,
            "discard": "new",
            "storage": "memory",
            "num_replicas": 3,
            "no_ack": True,
            "duplicate_window": SECOND,
            "placement": {"cluster": "C", "tags": ["t1", "t2"], "preferred": "n1"},
            "mirror": {
                "name": "M",
                "opt_start_seq": 5,
                "opt_start_time": T1,
                "filter_subject": "m.>",
                "subject_transforms": [{"src": "m.>", "dest": "n.>"}, {"src": "x"}],
                "external": {"api": "$JS.hub.API", "deliver": "dl"},
                "consumer": {"name": "mc", "deliver_subject": "ds"},
            },
            "sources": [
                {"name": "A", "opt_start_time": T2, "external": {"api": "$JS.a.API"}},
                {"name": "B", "consumer": {"name": "bc"}, "subject_transforms": [{"dest": "d"}]},
            ],
            "compression": "s2",
            "first_seq": 42,
            "subject_transform": {"src": "a", "dest": "b"},
            "republish": {"src": ">", "dest": "r.>", "headers_only": True},
            "allow_direct": True,
            "mirror_direct": True,
            "discard_new_per_subject": True,
            "sealed": True,
            "deny_delete": True,
            "deny_purge": True,
            "allow_rollup_hdrs": True,
            "consumer_limits": {"max_ack_pending": 7, "inactive_threshold": 3 * SECOND},
            "allow_msg_ttl": True,
            "subject_delete_marker_ttl": 2 * SECOND,
            "allow_msg_counter": True,
            "allow_atomic": True,
            "allow_msg_schedules": True,
            "persist_mode": "async",
            "allow_batched": True,
            "metadata": {"zeta": "1", "alpha": "2", "_nats.req.level": "4"},
        },
        "empty_parts": {
            "name": "S",
            "placement": {"cluster": "", "tags": []},
            "mirror": {"name": "M", "opt_start_time": GoTime(0)},
            "sources": [],
            "subject_transform": {},
            "republish": {},
            "consumer_limits": {"max_ack_pending": 0},
            "persist_mode": "default",
            "metadata": {},
        },
    }


def consumer_samples() -> dict[str, dict[str, Any]]:
    """Consumer configs (over the zero config) covering each field's ways of being written."""
    return {
        "zero": {},
        "pull": {
            "durable_name": "D",
            "name": "D",
            "deliver_policy": "all",
            "ack_policy": "explicit",
            "ack_wait": 30 * SECOND,
            "max_deliver": -1,
            "replay_policy": "instant",
            "max_waiting": 512,
            "max_ack_pending": 1000,
            "num_replicas": 0,
            "metadata": {"_nats.req.level": "0"},
        },
        "everything": {
            "durable_name": "D",
            "name": "N",
            "description": "d <&>",
            "deliver_policy": "by_start_time",
            "opt_start_seq": 3,
            "opt_start_time": T2,
            "ack_policy": "flow_control",
            "ack_wait": SECOND,
            "max_deliver": 5,
            "backoff": [SECOND, 2 * SECOND],
            "filter_subject": "a",
            "filter_subjects": ["b", "c"],
            "replay_policy": "original",
            "rate_limit_bps": 1000,
            "sample_freq": "50%",
            "max_waiting": 4,
            "max_ack_pending": 9,
            "flow_control": True,
            "headers_only": True,
            "max_batch": 10,
            "max_expires": 5 * SECOND,
            "max_bytes": 2048,
            "deliver_subject": "dl",
            "deliver_group": "q",
            "idle_heartbeat": SECOND,
            "inactive_threshold": 60 * SECOND,
            "num_replicas": 3,
            "mem_storage": True,
            "direct": True,
            "sourcing": True,
            "metadata": {"b": "x", "a": "y"},
            "pause_until": T1,
            "priority_groups": ["g1", "g2"],
            "priority_policy": "pinned_client",
            "priority_timeout": 2 * SECOND,
        },
        "empty_parts": {
            "backoff": [],
            "opt_start_time": GoTime(0),
            "metadata": {},
            "priority_policy": "none",
            "pause_until": None,
            "filter_subjects": [],
        },
        "prioritized": {"priority_policy": "prioritized", "priority_groups": ["A"], "metadata": None},
    }


STREAM_JSON = {
    "named": (
        '{"name":"S","retention":"limits","max_consumers":0,"max_msgs":0,"max_bytes":0,"max_age":0,"max_msgs_per_subject":0,"discard":"old","storage":"","num_replicas":0,"compression":"none","allow_direct":false,"mirror_direct":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{},"allow_msg_ttl":false,"metadata":{"_nats.level":"<API_LEVEL>","_nats.ver":"<NATS_VERSION>"}}',
        '{"name":"S","retention":"limits","max_consumers":0,"max_msgs":0,"max_bytes":0,"max_age":0,"max_msgs_per_subject":0,"discard":"old","storage":"","num_replicas":0,"compression":"none","allow_direct":false,"mirror_direct":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{},"allow_msg_ttl":false}',
        '{"name":"S","description":"","subjects":[],"retention":"limits","max_consumers":0,"max_msgs":0,"max_bytes":0,"max_age":0,"max_msgs_per_subject":0,"max_msg_size":0,"discard":"old","storage":"","num_replicas":0,"no_ack":false,"duplicate_window":0,"placement":null,"mirror":null,"sources":null,"compression":"none","first_seq":0,"subject_transform":null,"republish":null,"allow_direct":false,"mirror_direct":false,"discard_new_per_subject":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{},"allow_msg_ttl":false,"subject_delete_marker_ttl":0,"allow_msg_counter":false,"allow_atomic":false,"allow_msg_schedules":false,"persist_mode":"default","allow_batched":false,"metadata":null}',
    ),
    "defaulted": (
        '{"name":"S","subjects":["a","b.\\u003e"],"retention":"limits","max_consumers":-1,"max_msgs":-1,"max_bytes":-1,"max_age":0,"max_msgs_per_subject":-1,"max_msg_size":-1,"discard":"old","storage":"file","num_replicas":1,"duplicate_window":120000000000,"compression":"none","allow_direct":false,"mirror_direct":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{},"allow_msg_ttl":false,"metadata":{"_nats.level":"<API_LEVEL>","_nats.req.level":"0","_nats.ver":"<NATS_VERSION>"}}',
        '{"name":"S","subjects":["a","b.\\u003e"],"retention":"limits","max_consumers":-1,"max_msgs":-1,"max_bytes":-1,"max_age":0,"max_msgs_per_subject":-1,"max_msg_size":-1,"discard":"old","storage":"file","num_replicas":1,"duplicate_window":120000000000,"compression":"none","allow_direct":false,"mirror_direct":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{},"allow_msg_ttl":false,"metadata":{"_nats.req.level":"0"}}',
        '{"name":"S","description":"","subjects":["a","b.\\u003e"],"retention":"limits","max_consumers":-1,"max_msgs":-1,"max_bytes":-1,"max_age":0,"max_msgs_per_subject":-1,"max_msg_size":-1,"discard":"old","storage":"file","num_replicas":1,"no_ack":false,"duplicate_window":120000000000,"placement":null,"mirror":null,"sources":null,"compression":"none","first_seq":0,"subject_transform":null,"republish":null,"allow_direct":false,"mirror_direct":false,"discard_new_per_subject":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{},"allow_msg_ttl":false,"subject_delete_marker_ttl":0,"allow_msg_counter":false,"allow_atomic":false,"allow_msg_schedules":false,"persist_mode":"default","allow_batched":false,"metadata":{"_nats.req.level":"0"}}',
    ),
    "everything": (
        '{"name":"S","description":"all \\u003cset\\u003e \\u0026 more","subjects":["a"],"retention":"workqueue","max_consumers":5,"max_msgs":10,"max_bytes":1024,"max_age":60000000000,"max_msgs_per_subject":2,"max_msg_size":128,"discard":"new","storage":"memory","num_replicas":3,"no_ack":true,"duplicate_window":1000000000,"placement":{"cluster":"C","tags":["t1","t2"],"preferred":"n1"},"mirror":{"name":"M","opt_start_seq":5,"opt_start_time":"2023-11-14T22:13:20.123456789Z","filter_subject":"m.\\u003e","subject_transforms":[{"src":"m.\\u003e","dest":"n.\\u003e"},{"src":"x","dest":""}],"external":{"api":"$JS.hub.API","deliver":"dl"},"consumer":{"name":"mc","deliver_subject":"ds"}},"sources":[{"name":"A","opt_start_time":"2023-11-14T23:15:00+01:00","external":{"api":"$JS.a.API","deliver":""}},{"name":"B","subject_transforms":[{"src":"","dest":"d"}],"consumer":{"name":"bc","deliver_subject":""}}],"compression":"s2","first_seq":42,"subject_transform":{"src":"a","dest":"b"},"republish":{"src":"\\u003e","dest":"r.\\u003e","headers_only":true},"allow_direct":true,"mirror_direct":true,"discard_new_per_subject":true,"sealed":true,"deny_delete":true,"deny_purge":true,"allow_rollup_hdrs":true,"consumer_limits":{"inactive_threshold":3000000000,"max_ack_pending":7},"allow_msg_ttl":true,"subject_delete_marker_ttl":2000000000,"allow_msg_counter":true,"allow_atomic":true,"allow_msg_schedules":true,"persist_mode":"async","allow_batched":true,"metadata":{"_nats.level":"<API_LEVEL>","_nats.req.level":"4","_nats.ver":"<NATS_VERSION>","alpha":"2","zeta":"1"}}',
        '{"name":"S","description":"all \\u003cset\\u003e \\u0026 more","subjects":["a"],"retention":"workqueue","max_consumers":5,"max_msgs":10,"max_bytes":1024,"max_age":60000000000,"max_msgs_per_subject":2,"max_msg_size":128,"discard":"new","storage":"memory","num_replicas":3,"no_ack":true,"duplicate_window":1000000000,"placement":{"cluster":"C","tags":["t1","t2"],"preferred":"n1"},"mirror":{"name":"M","opt_start_seq":5,"opt_start_time":"2023-11-14T22:13:20.123456789Z","filter_subject":"m.\\u003e","subject_transforms":[{"src":"m.\\u003e","dest":"n.\\u003e"},{"src":"x","dest":""}],"external":{"api":"$JS.hub.API","deliver":"dl"},"consumer":{"name":"mc","deliver_subject":"ds"}},"sources":[{"name":"A","opt_start_time":"2023-11-14T23:15:00+01:00","external":{"api":"$JS.a.API","deliver":""}},{"name":"B","subject_transforms":[{"src":"","dest":"d"}],"consumer":{"name":"bc","deliver_subject":""}}],"compression":"s2","first_seq":42,"subject_transform":{"src":"a","dest":"b"},"republish":{"src":"\\u003e","dest":"r.\\u003e","headers_only":true},"allow_direct":true,"mirror_direct":true,"discard_new_per_subject":true,"sealed":true,"deny_delete":true,"deny_purge":true,"allow_rollup_hdrs":true,"consumer_limits":{"inactive_threshold":3000000000,"max_ack_pending":7},"allow_msg_ttl":true,"subject_delete_marker_ttl":2000000000,"allow_msg_counter":true,"allow_atomic":true,"allow_msg_schedules":true,"persist_mode":"async","allow_batched":true,"metadata":{"_nats.req.level":"4","alpha":"2","zeta":"1"}}',
        '{"name":"S","description":"all \\u003cset\\u003e \\u0026 more","subjects":["a"],"retention":"workqueue","max_consumers":5,"max_msgs":10,"max_bytes":1024,"max_age":60000000000,"max_msgs_per_subject":2,"max_msg_size":128,"discard":"new","storage":"memory","num_replicas":3,"no_ack":true,"duplicate_window":1000000000,"placement":{"cluster":"C","tags":["t1","t2"],"preferred":"n1"},"mirror":{"name":"M","opt_start_seq":5,"opt_start_time":"2023-11-14T22:13:20.123456789Z","filter_subject":"m.\\u003e","subject_transforms":[{"src":"m.\\u003e","dest":"n.\\u003e"},{"src":"x"}],"external":{"api":"$JS.hub.API","deliver":"dl"},"consumer":{"name":"mc","deliver_subject":"ds"}},"sources":[{"name":"A","opt_start_time":"2023-11-14T23:15:00+01:00","external":{"api":"$JS.a.API"}},{"name":"B","consumer":{"name":"bc"},"subject_transforms":[{"dest":"d"}]}],"compression":"s2","first_seq":42,"subject_transform":{"src":"a","dest":"b"},"republish":{"src":"\\u003e","dest":"r.\\u003e","headers_only":true},"allow_direct":true,"mirror_direct":true,"discard_new_per_subject":true,"sealed":true,"deny_delete":true,"deny_purge":true,"allow_rollup_hdrs":true,"consumer_limits":{"max_ack_pending":7,"inactive_threshold":3000000000},"allow_msg_ttl":true,"subject_delete_marker_ttl":2000000000,"allow_msg_counter":true,"allow_atomic":true,"allow_msg_schedules":true,"persist_mode":"async","allow_batched":true,"metadata":{"zeta":"1","alpha":"2","_nats.req.level":"4"}}',
    ),
    "empty_parts": (
        '{"name":"S","retention":"limits","max_consumers":0,"max_msgs":0,"max_bytes":0,"max_age":0,"max_msgs_per_subject":0,"discard":"old","storage":"","num_replicas":0,"placement":{},"mirror":{"name":"M","opt_start_time":"0001-01-01T00:00:00Z"},"compression":"none","subject_transform":{"src":"","dest":""},"republish":{"dest":""},"allow_direct":false,"mirror_direct":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{},"allow_msg_ttl":false,"metadata":{"_nats.level":"<API_LEVEL>","_nats.ver":"<NATS_VERSION>"}}',
        '{"name":"S","retention":"limits","max_consumers":0,"max_msgs":0,"max_bytes":0,"max_age":0,"max_msgs_per_subject":0,"discard":"old","storage":"","num_replicas":0,"placement":{},"mirror":{"name":"M","opt_start_time":"0001-01-01T00:00:00Z"},"compression":"none","subject_transform":{"src":"","dest":""},"republish":{"dest":""},"allow_direct":false,"mirror_direct":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{},"allow_msg_ttl":false}',
        '{"name":"S","description":"","subjects":[],"retention":"limits","max_consumers":0,"max_msgs":0,"max_bytes":0,"max_age":0,"max_msgs_per_subject":0,"max_msg_size":0,"discard":"old","storage":"","num_replicas":0,"no_ack":false,"duplicate_window":0,"placement":{"cluster":"","tags":[]},"mirror":{"name":"M","opt_start_time":"0001-01-01T00:00:00Z"},"sources":[],"compression":"none","first_seq":0,"subject_transform":{},"republish":{},"allow_direct":false,"mirror_direct":false,"discard_new_per_subject":false,"sealed":false,"deny_delete":false,"deny_purge":false,"allow_rollup_hdrs":false,"consumer_limits":{"max_ack_pending":0},"allow_msg_ttl":false,"subject_delete_marker_ttl":0,"allow_msg_counter":false,"allow_atomic":false,"allow_msg_schedules":false,"persist_mode":"default","allow_batched":false,"metadata":{}}',
    ),
}
CONSUMER_JSON = {
    "zero": (
        '{"deliver_policy":"all","ack_policy":"none","replay_policy":"instant","num_replicas":0,"metadata":{"_nats.level":"<API_LEVEL>","_nats.ver":"<NATS_VERSION>"}}',
        '{"deliver_policy":"all","ack_policy":"none","replay_policy":"instant","num_replicas":0}',
        '{"durable_name":"","name":"","description":"","deliver_policy":"all","opt_start_seq":0,"opt_start_time":null,"ack_policy":"none","ack_wait":0,"max_deliver":0,"backoff":[],"filter_subject":"","filter_subjects":[],"replay_policy":"instant","rate_limit_bps":0,"sample_freq":"","max_waiting":0,"max_ack_pending":0,"flow_control":false,"headers_only":false,"max_batch":0,"max_expires":0,"max_bytes":0,"deliver_subject":"","deliver_group":"","idle_heartbeat":0,"inactive_threshold":0,"num_replicas":0,"mem_storage":false,"direct":false,"sourcing":false,"metadata":null,"pause_until":null,"priority_groups":[],"priority_policy":"none","priority_timeout":0}',
    ),
    "pull": (
        '{"durable_name":"D","name":"D","deliver_policy":"all","ack_policy":"explicit","ack_wait":30000000000,"max_deliver":-1,"replay_policy":"instant","max_waiting":512,"max_ack_pending":1000,"num_replicas":0,"metadata":{"_nats.level":"<API_LEVEL>","_nats.req.level":"0","_nats.ver":"<NATS_VERSION>"}}',
        '{"durable_name":"D","name":"D","deliver_policy":"all","ack_policy":"explicit","ack_wait":30000000000,"max_deliver":-1,"replay_policy":"instant","max_waiting":512,"max_ack_pending":1000,"num_replicas":0,"metadata":{"_nats.req.level":"0"}}',
        '{"durable_name":"D","name":"D","description":"","deliver_policy":"all","opt_start_seq":0,"opt_start_time":null,"ack_policy":"explicit","ack_wait":30000000000,"max_deliver":-1,"backoff":[],"filter_subject":"","filter_subjects":[],"replay_policy":"instant","rate_limit_bps":0,"sample_freq":"","max_waiting":512,"max_ack_pending":1000,"flow_control":false,"headers_only":false,"max_batch":0,"max_expires":0,"max_bytes":0,"deliver_subject":"","deliver_group":"","idle_heartbeat":0,"inactive_threshold":0,"num_replicas":0,"mem_storage":false,"direct":false,"sourcing":false,"metadata":{"_nats.req.level":"0"},"pause_until":null,"priority_groups":[],"priority_policy":"none","priority_timeout":0}',
    ),
    "everything": (
        '{"durable_name":"D","name":"N","description":"d \\u003c\\u0026\\u003e","deliver_policy":"by_start_time","opt_start_seq":3,"opt_start_time":"2023-11-14T23:15:00+01:00","ack_policy":"flow_control","ack_wait":1000000000,"max_deliver":5,"backoff":[1000000000,2000000000],"filter_subject":"a","filter_subjects":["b","c"],"replay_policy":"original","rate_limit_bps":1000,"sample_freq":"50%","max_waiting":4,"max_ack_pending":9,"flow_control":true,"headers_only":true,"max_batch":10,"max_expires":5000000000,"max_bytes":2048,"deliver_subject":"dl","deliver_group":"q","idle_heartbeat":1000000000,"inactive_threshold":60000000000,"num_replicas":3,"mem_storage":true,"direct":true,"sourcing":true,"metadata":{"_nats.level":"<API_LEVEL>","_nats.ver":"<NATS_VERSION>","a":"y","b":"x"},"pause_until":"2023-11-14T22:13:20.123456789Z","priority_groups":["g1","g2"],"priority_policy":"pinned_client","priority_timeout":2000000000}',
        '{"durable_name":"D","name":"N","description":"d \\u003c\\u0026\\u003e","deliver_policy":"by_start_time","opt_start_seq":3,"opt_start_time":"2023-11-14T23:15:00+01:00","ack_policy":"flow_control","ack_wait":1000000000,"max_deliver":5,"backoff":[1000000000,2000000000],"filter_subject":"a","filter_subjects":["b","c"],"replay_policy":"original","rate_limit_bps":1000,"sample_freq":"50%","max_waiting":4,"max_ack_pending":9,"flow_control":true,"headers_only":true,"max_batch":10,"max_expires":5000000000,"max_bytes":2048,"deliver_subject":"dl","deliver_group":"q","idle_heartbeat":1000000000,"inactive_threshold":60000000000,"num_replicas":3,"mem_storage":true,"direct":true,"sourcing":true,"metadata":{"a":"y","b":"x"},"pause_until":"2023-11-14T22:13:20.123456789Z","priority_groups":["g1","g2"],"priority_policy":"pinned_client","priority_timeout":2000000000}',
        '{"durable_name":"D","name":"N","description":"d \\u003c\\u0026\\u003e","deliver_policy":"by_start_time","opt_start_seq":3,"opt_start_time":"2023-11-14T23:15:00+01:00","ack_policy":"flow_control","ack_wait":1000000000,"max_deliver":5,"backoff":[1000000000,2000000000],"filter_subject":"a","filter_subjects":["b","c"],"replay_policy":"original","rate_limit_bps":1000,"sample_freq":"50%","max_waiting":4,"max_ack_pending":9,"flow_control":true,"headers_only":true,"max_batch":10,"max_expires":5000000000,"max_bytes":2048,"deliver_subject":"dl","deliver_group":"q","idle_heartbeat":1000000000,"inactive_threshold":60000000000,"num_replicas":3,"mem_storage":true,"direct":true,"sourcing":true,"metadata":{"b":"x","a":"y"},"pause_until":"2023-11-14T22:13:20.123456789Z","priority_groups":["g1","g2"],"priority_policy":"pinned_client","priority_timeout":2000000000}',
    ),
    "empty_parts": (
        '{"deliver_policy":"all","opt_start_time":"0001-01-01T00:00:00Z","ack_policy":"none","replay_policy":"instant","num_replicas":0,"metadata":{"_nats.level":"<API_LEVEL>","_nats.ver":"<NATS_VERSION>"}}',
        '{"deliver_policy":"all","opt_start_time":"0001-01-01T00:00:00Z","ack_policy":"none","replay_policy":"instant","num_replicas":0}',
        '{"durable_name":"","name":"","description":"","deliver_policy":"all","opt_start_seq":0,"opt_start_time":"0001-01-01T00:00:00Z","ack_policy":"none","ack_wait":0,"max_deliver":0,"backoff":[],"filter_subject":"","filter_subjects":[],"replay_policy":"instant","rate_limit_bps":0,"sample_freq":"","max_waiting":0,"max_ack_pending":0,"flow_control":false,"headers_only":false,"max_batch":0,"max_expires":0,"max_bytes":0,"deliver_subject":"","deliver_group":"","idle_heartbeat":0,"inactive_threshold":0,"num_replicas":0,"mem_storage":false,"direct":false,"sourcing":false,"metadata":{},"pause_until":null,"priority_groups":[],"priority_policy":"none","priority_timeout":0}',
    ),
    "prioritized": (
        '{"deliver_policy":"all","ack_policy":"none","replay_policy":"instant","num_replicas":0,"metadata":{"_nats.level":"<API_LEVEL>","_nats.ver":"<NATS_VERSION>"},"priority_groups":["A"],"priority_policy":"prioritized"}',
        '{"deliver_policy":"all","ack_policy":"none","replay_policy":"instant","num_replicas":0,"priority_groups":["A"],"priority_policy":"prioritized"}',
        '{"durable_name":"","name":"","description":"","deliver_policy":"all","opt_start_seq":0,"opt_start_time":null,"ack_policy":"none","ack_wait":0,"max_deliver":0,"backoff":[],"filter_subject":"","filter_subjects":[],"replay_policy":"instant","rate_limit_bps":0,"sample_freq":"","max_waiting":0,"max_ack_pending":0,"flow_control":false,"headers_only":false,"max_batch":0,"max_expires":0,"max_bytes":0,"deliver_subject":"","deliver_group":"","idle_heartbeat":0,"inactive_threshold":0,"num_replicas":0,"mem_storage":false,"direct":false,"sourcing":false,"metadata":null,"pause_until":null,"priority_groups":["A"],"priority_policy":"prioritized","priority_timeout":0}',
    ),
}


TABLES = [
    pytest.param(stream.STREAM_FIELDS, stream.StreamConfig, id="stream"),
    pytest.param(consumer.CONSUMER_FIELDS, consumer.ConsumerConfig, id="consumer"),
]


@pytest.mark.parametrize(("table", "typed"), TABLES)
def test_the_typed_dict_names_the_table_fields_in_order(table: ConfigTable, typed: type) -> None:
    assert tuple(typing.get_type_hints(typed)) == table.names


@pytest.mark.parametrize(("table", "typed"), TABLES)
def test_the_schema_and_zero_config_hold_every_field_in_order(table: ConfigTable, typed: type) -> None:
    assert tuple(f.name for f in table.struct.fields) == table.names
    assert tuple(table.zero) == table.names


def test_the_request_schemas_keep_their_names() -> None:
    assert stream.STREAM_CONFIG is stream.STREAM_FIELDS.struct
    assert stream.STREAM_CONFIG.go_name == "StreamConfig"
    assert [f.name for f in stream.STREAM_CONFIG_REQUEST.fields] == [*stream.STREAM_FIELDS.names, "pedantic"]
    assert consumer.CONSUMER_CONFIG is consumer.CONSUMER_FIELDS.struct
    assert consumer.CONSUMER_CONFIG.go_name == "ConsumerConfig"
    config = consumer.CREATE_REQUEST.lookup("config")
    assert config is not None
    assert config.go_type is consumer.CONSUMER_CONFIG


def _cases() -> list[Any]:
    cases = []
    for kind, module, samples, expected in (
        ("stream", stream, stream_samples(), STREAM_JSON),
        ("consumer", consumer, consumer_samples(), CONSUMER_JSON),
    ):
        assert samples.keys() == expected.keys()
        for name, fields in samples.items():
            cases.append(pytest.param(module, fields, *expected[name], id=f"{kind}-{name}"))
    return cases


@pytest.mark.parametrize(("module", "fields", "shown", "static", "storable"), _cases())
def test_json_and_storable_forms(module: Any, fields: dict[str, Any], shown: str, static: str, storable: str) -> None:
    cfg = {**copy.deepcopy(module.ZERO), **fields}
    shown = shown.replace("<NATS_VERSION>", NATS_VERSION).replace("<API_LEVEL>", str(API_LEVEL))
    assert gojson.dumps(module.to_json(cfg)) == shown
    assert gojson.dumps(module.to_json(cfg, dynamic_metadata=False)) == static
    stored = module.to_storable(cfg)
    assert gojson.dumps(stored) == storable
    assert module.from_storable(json.loads(json.dumps(stored))) == cfg


def test_a_request_fills_absent_fields_and_empties_null_lists() -> None:
    cfg = consumer.from_request(
        {"durable_name": "D", "backoff": None, "filter_subjects": None, "metadata": None, "x": 1}
    )
    assert cfg == {**consumer.ZERO, "durable_name": "D"}
    assert cfg["backoff"] is not consumer.ZERO["backoff"]
    assert consumer.from_request(None) == consumer.ZERO
    scfg = stream.from_request(
        {"name": "S", "subjects": None, "consumer_limits": None, "sources": None, "pedantic": True}
    )
    assert scfg == {**stream.ZERO, "name": "S"}
    assert scfg["sources"] is None


def test_an_older_stored_config_reads_back_with_zero_values() -> None:
    assert consumer.from_storable({"durable_name": "D", "pause_until": T1.text()}) == {
        **consumer.ZERO,
        "durable_name": "D",
        "pause_until": T1,
    }
    assert stream.from_storable({"name": "S", "mirror": {"name": "M", "opt_start_time": T2.text()}}) == {
        **stream.ZERO,
        "name": "S",
        "mirror": {"name": "M", "opt_start_time": T2},
    }
