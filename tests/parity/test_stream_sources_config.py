"""The configuration of a stream's ``mirror`` and ``sources`` on both targets.

Every expectation is what nats-server 2.15.1 answers (checked against the
binary); only the ``config`` of a reply is compared where the rest depends
on the mirror or sources running (the ``mirror``/``sources`` info blocks).
Facts pinned here:

- the checks and their order: feature checks first (counters, schedules...),
  then the mirror's (first_seq 10143, subjects 10034, sources 10031,
  counters/atomic/batched/schedules, its consumer 10213, filter + transforms
  10150, delete markers, transform sources 10151 / destinations 10154 /
  overlaps 10152, name 10142 unless external, then its origin: max message
  size 10030, ``mirror_direct`` taken from the origin's ``allow_direct``,
  pedantic 10157), sources with schedules 10187, each source (name 10141,
  duplicates 10140 by name + external API + filters + destinations, filter +
  transforms 10144, transforms 10145/10146, filters that are subsets 10147,
  consumer 10215, origin's max message size 10046), external delivery
  prefixes (wildcards 10024, overlap with an origin's subjects 10022), API
  prefixes (no wildcards, 10052; overlap with ``$JS.API`` 10021), cycles
  ("detected cycle", a source back only when its filter meets the subjects),
  then the subjects; a bad single filter is a create error (10049) found
  only after the limits, and not checked by an update;
- an origin need not exist; a stream with a mirror or sources has no default
  subject and no duplicate window unless one is given; ``sources: []`` is none;
- the echo: ``name`` always, ``external`` with both prefixes even when empty,
  transforms with both sides, ``opt_start_time`` as Go writes it (its offset
  kept, zeros trimmed);
- updates: any other mirror (or ``[]`` for absent transforms, or the same
  instant written with another offset) is 10055; sources may change; removing
  the mirror promotes the stream (its name as subject, a 2-minute or max-age
  duplicate window), and the mirror cannot be put back.
"""

from __future__ import annotations

import asyncio
from typing import Any

import nats

from tests.harness.js import api
from tests.harness.streams import OMIT
from tests.harness.streams import stream_config as config
from tests.harness.targets import Target

SEC = 1_000_000_000
WINDOW = 120 * SEC


def error(code: int, err_code: int, description: str) -> dict[str, Any]:
    return {"code": code, "err_code": err_code, "description": description}


def invalid(text: str) -> dict[str, Any]:
    return error(500, 10052, text)


def sourcing(name: str, **changes: Any) -> dict[str, Any]:
    """The echoed config of a stream with a mirror or sources: no default subject or duplicate window."""
    return config(name, **{"subjects": OMIT, "duplicate_window": OMIT, **changes})


# nats-server 2.15.1's "error creating store for stream" (10049): under load, a stream created
# again right after its delete can find the old store directory not yet gone.
STORE_NOT_READY = 10049


async def create(nc, body: dict[str, Any]) -> dict[str, Any]:
    """``STREAM.CREATE``, again for a moment while the server has not yet removed a deleted namesake's store."""
    for _ in range(40):
        reply = await api(nc, f"$JS.API.STREAM.CREATE.{body['name']}", body)
        if reply.get("error", {}).get("err_code") != STORE_NOT_READY:
            break
        await asyncio.sleep(0.05)
    return reply


async def update(nc, body: dict[str, Any]) -> dict[str, Any]:
    return await api(nc, f"$JS.API.STREAM.UPDATE.{body['name']}", body)


async def delete(nc, name: str) -> None:
    await api(nc, f"$JS.API.STREAM.DELETE.{name}")


def outcome(reply: dict[str, Any]) -> dict[str, Any]:
    """The error of a reply, or its config."""
    return reply["error"] if "error" in reply else reply["config"]


async def outcomes(nc, cases: dict[str, tuple[dict[str, Any], Any]], keep: bool = False) -> dict[str, Any]:
    """Create each case's body (deleted again unless ``keep``) and collect what came back."""
    got = {}
    for key, (body, _) in cases.items():
        reply = await create(nc, body)
        got[key] = outcome(reply)
        if "error" not in reply and not keep:
            await delete(nc, body["name"])
    return got


def expected(cases: dict[str, tuple[dict[str, Any], Any]]) -> dict[str, Any]:
    return {key: want for key, (_, want) in cases.items()}


M = {"name": "O"}  # a mirror of a stream that does not exist

CREATE_ERRORS: dict[str, tuple[dict[str, Any], Any]] = {
    "mirror_subjects": (
        {"name": "M", "mirror": M, "subjects": ["a"]},
        error(400, 10034, "stream mirrors can not contain subjects"),
    ),
    "mirror_sources": (
        {"name": "M", "mirror": M, "sources": [{"name": "X"}]},
        error(400, 10031, "stream mirrors can not also contain other sources"),
    ),
    "mirror_first_seq": (
        {"name": "M", "mirror": M, "first_seq": 5, "subjects": ["a"]},
        error(400, 10143, "stream mirrors can not have first sequence configured"),
    ),
    "mirror_counter": (
        {"name": "M", "mirror": M, "allow_msg_counter": True},
        error(400, 10173, "stream mirrors can not also calculate counters"),
    ),
    "counter_rules_first": (
        {"name": "M", "mirror": M, "allow_msg_counter": True, "discard": "new"},
        invalid("counter stream cannot use discard new"),
    ),
    "mirror_atomic": (
        {"name": "M", "mirror": M, "allow_atomic": True},
        error(400, 10198, "stream mirrors can not also use atomic publishing"),
    ),
    "mirror_batched": (
        {"name": "M", "mirror": M, "allow_batched": True},
        error(400, 10209, "stream mirrors can not also use batch publishing"),
    ),
    "mirror_schedules": (
        {"name": "M", "mirror": M, "allow_msg_schedules": True},
        error(400, 10186, "stream mirrors can not also schedule messages"),
    ),
    "mirror_delete_markers": (
        {"name": "M", "mirror": M, "subject_delete_marker_ttl": SEC},
        invalid("subject delete markers forbidden on mirrors"),
    ),
    "mirror_no_name": ({"name": "M", "mirror": {}}, error(400, 10142, "mirrored stream name is invalid")),
    "mirror_bad_name": ({"name": "M", "mirror": {"name": "a.b"}}, error(400, 10142, "mirrored stream name is invalid")),
    "mirror_subjects_before_name": (
        {"name": "M", "mirror": {"name": "a.b"}, "subjects": ["x"]},
        error(400, 10034, "stream mirrors can not contain subjects"),
    ),
    "mirror_of_itself": ({"name": "M", "mirror": {"name": "M"}}, invalid("detected cycle")),
    "mirror_filter_and_transforms": (
        {
            "name": "M",
            "mirror": {"name": "O", "filter_subject": "a", "subject_transforms": [{"src": "b", "dest": "c"}]},
        },
        error(400, 10150, "mirror with multiple subject transforms cannot also have a single subject filter"),
    ),
    "mirror_transform_source": (
        {"name": "M", "mirror": {"name": "O", "subject_transforms": [{"src": "a..b", "dest": "c"}]}},
        error(400, 10151, "mirror transform source: invalid subject a..b"),
    ),
    "mirror_transform_destination": (
        {"name": "M", "mirror": {"name": "O", "subject_transforms": [{"src": "a.*", "dest": "c.$2"}]}},
        error(400, 10154, "mirror transform: invalid mapping destination: wildcard index out of range in $2: [2]"),
    ),
    "mirror_transforms_overlap": (
        {
            "name": "M",
            "mirror": {
                "name": "O",
                "subject_transforms": [{"src": "a.*.c", "dest": "x"}, {"src": "a.b.*", "dest": "y"}],
            },
        },
        error(400, 10152, "mirror subject filters can not overlap"),
    ),
    "mirror_bad_filter": (
        {"name": "M", "mirror": {"name": "O", "filter_subject": "a..b"}},
        error(500, 10049, "subject filter 'a..b' for the mirror invalid subject"),
    ),
    "mirror_bad_consumer": (
        {"name": "M", "mirror": {"name": "O", "consumer": {"name": "c", "deliver_subject": "d.*"}}},
        error(400, 10213, "stream mirror consumer config is invalid"),
    ),
    "mirror_consumer_with_start": (
        {"name": "M", "mirror": {"name": "O", "opt_start_seq": 3, "consumer": {"name": "c", "deliver_subject": "d"}}},
        error(400, 10213, "stream mirror consumer config is invalid"),
    ),
    "source_of_itself": ({"name": "S", "sources": [{"name": "S"}]}, invalid("detected cycle")),
    "source_of_itself_matching_filter": (
        {"name": "S", "subjects": ["a"], "sources": [{"name": "S", "filter_subject": "a"}]},
        invalid("detected cycle"),
    ),
    "source_duplicate": (
        {"name": "S", "sources": [{"name": "O"}, {"name": "O"}]},
        error(400, 10140, "duplicate source configuration detected"),
    ),
    "source_duplicate_full_filter": (
        {"name": "S", "sources": [{"name": "O", "filter_subject": ">"}, {"name": "O"}]},
        error(400, 10140, "duplicate source configuration detected"),
    ),
    "source_duplicate_external": (
        {
            "name": "S",
            "sources": [
                {"name": "O", "external": {"api": "x"}},
                {"name": "O", "external": {"api": "x", "deliver": "z"}},
            ],
        },
        error(400, 10140, "duplicate source configuration detected"),
    ),
    "source_no_name": ({"name": "S", "sources": [{"name": ""}]}, error(400, 10141, "sourced stream name is invalid")),
    "source_null": ({"name": "S", "sources": [None]}, error(400, 10141, "sourced stream name is invalid")),
    "source_bad_name": (
        {"name": "S", "sources": [{"name": "a b"}]},
        error(400, 10141, "sourced stream name is invalid"),
    ),
    "source_external_no_name": (
        {"name": "S", "sources": [{"name": "", "external": {"api": "x"}}]},
        error(400, 10141, "sourced stream name is invalid"),
    ),
    "source_names_before_filters": (
        {"name": "S", "sources": [{"name": "O", "filter_subject": "a..b"}, {"name": ""}]},
        error(400, 10141, "sourced stream name is invalid"),
    ),
    "source_filter_and_transforms": (
        {
            "name": "S",
            "sources": [{"name": "O", "filter_subject": "a", "subject_transforms": [{"src": "b", "dest": "c"}]}],
        },
        error(400, 10144, "source with multiple subject transforms cannot also have a single subject filter"),
    ),
    "source_transform_source": (
        {"name": "S", "sources": [{"name": "O", "subject_transforms": [{"src": "a..b", "dest": "c"}]}]},
        error(400, 10145, "source transform source: invalid subject a..b"),
    ),
    "source_transform_destination": (
        {"name": "S", "sources": [{"name": "O", "subject_transforms": [{"src": "a.*", "dest": "c.$2"}]}]},
        error(400, 10146, "source transform: invalid mapping destination: wildcard index out of range in $2: [2]"),
    ),
    "source_transforms_subset": (
        {
            "name": "S",
            "sources": [
                {"name": "O", "subject_transforms": [{"src": "a.b", "dest": "x"}, {"src": "a.*", "dest": "y"}]}
            ],
        },
        error(400, 10147, "source filters can not overlap"),
    ),
    "source_bad_filter": (
        {"name": "S", "sources": [{"name": "O", "filter_subject": "a..b"}]},
        error(500, 10049, "subject filter 'a..b' for the source: invalid subject"),
    ),
    "subjects_before_bad_filter": (
        {"name": "S", "sources": [{"name": "O", "filter_subject": "a..b"}], "subjects": ["x", "x"]},
        invalid('subject "x" overlaps with "x"'),
    ),
    "source_schedules": (
        {"name": "S", "sources": [{"name": "O"}], "allow_msg_schedules": True},
        error(400, 10187, "stream source can not also schedule messages"),
    ),
    "schedule_rules_first": (
        {"name": "S", "sources": [{"name": "O"}], "allow_msg_schedules": True, "discard": "new"},
        invalid("message scheduling cannot use discard new"),
    ),
    "source_bad_consumer": (
        {"name": "S", "sources": [{"name": "O", "consumer": {"name": "", "deliver_subject": "d"}}]},
        error(400, 10215, "stream source consumer config is invalid"),
    ),
    "api_prefix_is_js_api": (
        {"name": "M", "mirror": {"name": "O", "external": {"api": "$JS.API"}}},
        error(400, 10021, "stream external api prefix $JS.API must not overlap with $JS.API"),
    ),
    "api_prefix_wildcard": (
        {"name": "M", "mirror": {"name": "O", "external": {"api": "$JS.API.>"}}},
        invalid('stream external api prefix "$JS.API.>" must be a valid subject without wildcards'),
    ),
    "api_prefix_invalid": (
        {"name": "S", "sources": [{"name": "O", "external": {"api": "a..b"}}]},
        invalid('stream external api prefix "a..b" must be a valid subject without wildcards'),
    ),
    "source_api_prefix_is_js_api": (
        {"name": "S", "sources": [{"name": "O", "external": {"api": "$JS.API"}}]},
        error(400, 10021, "stream external api prefix $JS.API must not overlap with $JS.API"),
    ),
    "deliver_prefix_wildcard": (
        {"name": "M", "mirror": {"name": "O", "external": {"api": "x", "deliver": "d.*"}}},
        error(400, 10024, "stream external delivery prefix d.* must not contain wildcards"),
    ),
    "deliver_prefix_before_api": (
        {"name": "M", "mirror": {"name": "O", "external": {"api": "$JS.API", "deliver": "d.>"}}},
        error(400, 10024, "stream external delivery prefix d.> must not contain wildcards"),
    ),
    "mirror_direct_without_mirror": (
        {"name": "S", "sources": [{"name": "O"}], "mirror_direct": True},
        invalid("stream has no mirror but does have mirror direct"),
    ),
    "sealed_before_mirror_direct": (
        {"name": "M", "mirror": M, "sealed": True},
        invalid("stream configuration for create can not be sealed"),
    ),
    "bad_start_time": (
        {"name": "M", "mirror": {"name": "O", "opt_start_time": "bad"}},
        error(
            400,
            10025,
            'invalid JSON: parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"',
        ),
    ),
}


async def test_create_errors(nc) -> None:
    assert await outcomes(nc, CREATE_ERRORS) == expected(CREATE_ERRORS)


T = "2024-01-02T03:04:05Z"

CREATE_ECHO: dict[str, tuple[dict[str, Any], Any]] = {
    "mirror": ({"name": "M", "mirror": M}, sourcing("M", mirror=M)),
    "sources": ({"name": "S", "sources": [M]}, sourcing("S", sources=[M])),
    "sources_empty": ({"name": "S", "sources": []}, config("S")),
    "sources_with_subjects": (
        {"name": "S", "subjects": ["s.>"], "sources": [M]},
        config("S", subjects=["s.>"], duplicate_window=OMIT, sources=[M]),
    ),
    "own_window": (
        {"name": "S", "sources": [M], "duplicate_window": 5 * SEC},
        sourcing("S", duplicate_window=5 * SEC, sources=[M]),
    ),
    "max_age_no_window": ({"name": "M", "mirror": M, "max_age": SEC}, sourcing("M", max_age=SEC, mirror=M)),
    "zero_fields_omitted": (
        {
            "name": "M",
            "mirror": {"name": "O", "opt_start_seq": 0, "opt_start_time": None, "filter_subject": "", "external": None},
        },
        sourcing("M", mirror=M),
    ),
    "start_seq_and_time": (
        {
            "name": "S",
            "sources": [{"name": "O", "opt_start_seq": 5, "opt_start_time": "2024-01-02T03:04:05.123456789Z"}],
        },
        sourcing("S", sources=[{"name": "O", "opt_start_seq": 5, "opt_start_time": "2024-01-02T03:04:05.123456789Z"}]),
    ),
    "start_time_trimmed": (
        {"name": "M", "mirror": {"name": "O", "opt_start_time": "2024-01-02T03:04:05.100000000Z"}},
        sourcing("M", mirror={"name": "O", "opt_start_time": "2024-01-02T03:04:05.1Z"}),
    ),
    "start_time_offset_kept": (
        {"name": "M", "mirror": {"name": "O", "opt_start_time": "2024-01-02T03:04:05.5-07:30"}},
        sourcing("M", mirror={"name": "O", "opt_start_time": "2024-01-02T03:04:05.5-07:30"}),
    ),
    "start_time_zero": (
        {"name": "M", "mirror": {"name": "O", "opt_start_time": "0001-01-01T00:00:00Z"}},
        sourcing("M", mirror={"name": "O", "opt_start_time": "0001-01-01T00:00:00Z"}),
    ),
    "external_empty": (
        {"name": "M", "mirror": {"name": "O", "external": {}}},
        sourcing("M", mirror={"name": "O", "external": {"api": "", "deliver": ""}}),
    ),
    "external_api_only": (
        {"name": "M", "mirror": {"name": "O", "external": {"api": "$JS.H.API"}}},
        sourcing("M", mirror={"name": "O", "external": {"api": "$JS.H.API", "deliver": ""}}),
    ),
    "external_deliver_only": (
        {"name": "M", "mirror": {"name": "O", "external": {"deliver": "dlv"}}},
        sourcing("M", mirror={"name": "O", "external": {"api": "", "deliver": "dlv"}}),
    ),
    "external_no_name": (
        {"name": "M", "mirror": {"name": "", "external": {"api": "$JS.H.API"}}},
        sourcing("M", mirror={"name": "", "external": {"api": "$JS.H.API", "deliver": ""}}),
    ),
    "external_of_own_name": (
        {"name": "M", "mirror": {"name": "M", "external": {"api": "$JS.H.API"}}},
        sourcing("M", mirror={"name": "M", "external": {"api": "$JS.H.API", "deliver": ""}}),
    ),
    "external_api_not_js_api": (
        {"name": "M", "mirror": {"name": "O", "external": {"api": "$JS"}}},
        sourcing("M", mirror={"name": "O", "external": {"api": "$JS", "deliver": ""}}),
    ),
    "transforms": (
        {"name": "M", "mirror": {"name": "O", "subject_transforms": [{"src": "a.>", "dest": "b.>"}]}},
        sourcing("M", mirror={"name": "O", "subject_transforms": [{"src": "a.>", "dest": "b.>"}]}),
    ),
    "transform_empty_sides": (
        {"name": "S", "sources": [{"name": "O", "subject_transforms": [{}, {"src": "a", "dest": ""}]}]},
        sourcing(
            "S", sources=[{"name": "O", "subject_transforms": [{"src": "", "dest": ""}, {"src": "a", "dest": ""}]}]
        ),
    ),
    "transforms_empty_list": (
        {"name": "M", "mirror": {"name": "O", "subject_transforms": []}},
        sourcing("M", mirror=M),
    ),
    "transforms_not_subsets": (
        {
            "name": "S",
            "sources": [
                {"name": "O", "subject_transforms": [{"src": "a.*.c", "dest": "x"}, {"src": "a.b.*", "dest": "y"}]}
            ],
        },
        sourcing(
            "S",
            sources=[
                {"name": "O", "subject_transforms": [{"src": "a.*.c", "dest": "x"}, {"src": "a.b.*", "dest": "y"}]}
            ],
        ),
    ),
    "same_origin_other_filters": (
        {"name": "S", "sources": [{"name": "O", "filter_subject": "a"}, {"name": "O", "filter_subject": "b"}]},
        sourcing("S", sources=[{"name": "O", "filter_subject": "a"}, {"name": "O", "filter_subject": "b"}]),
    ),
    "same_origin_other_apis": (
        {"name": "S", "sources": [{"name": "O", "external": {"api": "x"}}, {"name": "O", "external": {"api": "y"}}]},
        sourcing(
            "S",
            sources=[
                {"name": "O", "external": {"api": "x", "deliver": ""}},
                {"name": "O", "external": {"api": "y", "deliver": ""}},
            ],
        ),
    ),
    "source_of_itself_other_filter": (
        {"name": "S", "subjects": ["a"], "sources": [{"name": "S", "filter_subject": "zz"}]},
        config("S", subjects=["a"], duplicate_window=OMIT, sources=[{"name": "S", "filter_subject": "zz"}]),
    ),
    "mirror_direct_without_origin": (
        {"name": "M", "mirror": M, "mirror_direct": True},
        sourcing("M", mirror=M, mirror_direct=True),
    ),
    "allow_direct_on_mirror": (
        {"name": "M", "mirror": M, "allow_direct": True},
        sourcing("M", mirror=M, allow_direct=True),
    ),
    "counters_from_sources": (
        {"name": "S", "sources": [M], "allow_msg_counter": True},
        sourcing("S", sources=[M], allow_msg_counter=True, metadata={**config()["metadata"], "_nats.req.level": "2"}),
    ),
}


async def test_create_echo(nc) -> None:
    assert await outcomes(nc, CREATE_ECHO) == expected(CREATE_ECHO)


async def test_info_and_list_echo(nc) -> None:
    bodies = [
        {
            "name": "L1",
            "mirror": {"name": "O", "opt_start_time": "2024-01-02T03:04:05.25+02:00", "external": {"api": "x"}},
        },
        {
            "name": "L2",
            "subjects": ["l2"],
            "sources": [{"name": "O", "subject_transforms": [{"src": "a", "dest": "b"}]}],
        },
    ]
    made = [outcome(await create(nc, body)) for body in bodies]
    infos = [outcome(await api(nc, f"$JS.API.STREAM.INFO.{body['name']}")) for body in bodies]
    listed = (await api(nc, "$JS.API.STREAM.LIST", {}))["streams"]
    assert infos == made
    # (STREAM.LIST writes the metadata without the server's dynamic keys: compared apart.)
    listed_configs = sorted(({k: v for k, v in s["config"].items() if k != "metadata"} for s in listed), key=str)
    assert listed_configs == sorted(({k: v for k, v in cfg.items() if k != "metadata"} for cfg in made), key=str)
    assert made[0]["mirror"] == {
        "name": "O",
        "opt_start_time": "2024-01-02T03:04:05.25+02:00",
        "external": {"api": "x", "deliver": ""},
    }
    # The same create again is a success; other sources are another config.
    assert outcome(await create(nc, bodies[1])) == made[1]
    assert outcome(await create(nc, {**bodies[1], "sources": [{"name": "O"}]})) == error(
        400, 10058, "stream name already in use with a different configuration"
    )


ORIGIN = {"name": "O", "subjects": ["o.>"], "allow_direct": True, "max_msg_size": 1000}

WITH_ORIGINS: dict[str, tuple[dict[str, Any], Any]] = {
    "mirror_direct_from_origin": ({"name": "M", "mirror": M}, sourcing("M", mirror=M, mirror_direct=True)),
    "mirror_direct_pedantic": (
        {"name": "M", "mirror": M, "pedantic": True},
        error(400, 10157, "pedantic mode: origin stream has direct get set, mirror has it disabled"),
    ),
    "mirror_direct_pedantic_agrees": (
        {"name": "M", "mirror": M, "mirror_direct": True, "pedantic": True},
        sourcing("M", mirror=M, mirror_direct=True),
    ),
    "mirror_smaller_messages": (
        {"name": "M", "mirror": M, "max_msg_size": 500},
        error(400, 10030, "stream mirror must have max message size >= source"),
    ),
    "mirror_same_messages": (
        {"name": "M", "mirror": M, "max_msg_size": 1000},
        sourcing("M", mirror=M, mirror_direct=True, max_msg_size=1000),
    ),
    "source_smaller_messages": (
        {"name": "S", "sources": [M], "max_msg_size": 500},
        error(400, 10046, "stream source must have max message size >= target"),
    ),
    "source_subjects_overlap_origin": (
        {"name": "S", "sources": [M], "subjects": ["o.x"]},
        error(400, 10065, "subjects overlap with an existing stream"),
    ),
    "external_deliver_prefix_alone": (
        {"name": "S", "sources": [{"name": "O", "external": {"api": "x", "deliver": "o"}}]},
        sourcing("S", sources=[{"name": "O", "external": {"api": "x", "deliver": "o"}}]),
    ),
    "deliver_prefix_overlaps_origin": (
        {"name": "S", "sources": [M, {"name": "P", "external": {"api": "x", "deliver": "o"}}]},
        error(400, 10022, "stream external delivery prefix o overlaps with stream subject o.>"),
    ),
    "deliver_prefix_clear_of_origin": (
        {"name": "S", "sources": [M, {"name": "P", "external": {"api": "x", "deliver": "dd"}}]},
        sourcing("S", sources=[M, {"name": "P", "external": {"api": "x", "deliver": "dd"}}]),
    ),
    "cycle_by_source": ({"name": "B", "subjects": ["b"], "sources": [{"name": "A"}]}, invalid("detected cycle")),
    "cycle_with_other_filter": (
        {"name": "B", "subjects": ["b"], "sources": [{"name": "A", "filter_subject": "zz"}]},
        invalid("detected cycle"),
    ),
    "cycle_by_mirror": ({"name": "B", "mirror": {"name": "A"}}, invalid("detected cycle")),
    "mirror_of_a_sourcing_stream": ({"name": "C", "mirror": {"name": "A"}}, sourcing("C", mirror={"name": "A"})),
}


async def test_checks_against_other_streams(nc) -> None:
    assert "error" not in await create(nc, ORIGIN)
    assert "error" not in await create(nc, {"name": "A", "subjects": ["a"], "sources": [{"name": "B"}]})
    assert await outcomes(nc, WITH_ORIGINS) == expected(WITH_ORIGINS)


async def test_mirror_direct_follows_origin_on_update(nc) -> None:
    assert "error" not in await create(nc, ORIGIN)
    body = {"name": "M", "mirror": M, "mirror_direct": True}
    assert outcome(await create(nc, {**body, "pedantic": True})) == sourcing("M", mirror=M, mirror_direct=True)
    assert "error" not in await update(nc, {**ORIGIN, "allow_direct": False})
    # The stored config keeps what it had until the mirror itself is updated.
    assert outcome(await api(nc, "$JS.API.STREAM.INFO.M"))["mirror_direct"] is True
    assert outcome(await update(nc, body)) == sourcing("M", mirror=M)
    assert outcome(await update(nc, {**body, "pedantic": True})) == error(
        400, 10157, "pedantic mode: origin stream has direct get set, mirror has it disabled"
    )


NOT_UPDATABLE = error(400, 10055, "stream mirror configuration can not be updated")


async def test_mirror_updates(nc) -> None:
    mirror = {"name": "O", "opt_start_time": T}
    assert "error" not in await create(nc, {"name": "M", "mirror": mirror})
    tries = {
        "same": {"mirror": mirror},
        "zero_fields": {"mirror": {**mirror, "filter_subject": "", "subject_transforms": None, "external": None}},
        "empty_transforms": {"mirror": {**mirror, "subject_transforms": []}},
        "same_instant_other_offset": {"mirror": {"name": "O", "opt_start_time": "2024-01-02T05:04:05+02:00"}},
        "filter": {"mirror": {**mirror, "filter_subject": "a"}},
        "other_origin": {"mirror": {"name": "X"}},
        "subjects": {"mirror": mirror, "subjects": ["q"]},
        "first_seq": {"mirror": mirror, "first_seq": 5},
        "mirror_direct": {"mirror": mirror, "mirror_direct": True},
    }
    got = {key: outcome(await update(nc, {"name": "M", **change})) for key, change in tries.items()}
    kept = sourcing("M", mirror={"name": "O", "opt_start_time": T})
    assert got == {
        "same": kept,
        "zero_fields": kept,
        "empty_transforms": NOT_UPDATABLE,
        "same_instant_other_offset": NOT_UPDATABLE,
        "filter": NOT_UPDATABLE,
        "other_origin": NOT_UPDATABLE,
        "subjects": error(400, 10034, "stream mirrors can not contain subjects"),
        "first_seq": error(400, 10143, "stream mirrors can not have first sequence configured"),
        "mirror_direct": sourcing("M", mirror={"name": "O", "opt_start_time": T}, mirror_direct=True),
    }


async def test_promotion(nc) -> None:
    bodies = {
        "plain": {"name": "P1", "mirror": M},
        "with_window": {"name": "P2", "mirror": M, "duplicate_window": 3 * SEC},
        "with_max_age": {"name": "P3", "mirror": M, "max_age": 60 * SEC},
        "to_sources": {"name": "P4", "mirror": M},
    }
    for body in bodies.values():
        assert "error" not in await create(nc, body)
    promoted = {
        "plain": await update(nc, {"name": "P1"}),
        "with_window": await update(nc, {"name": "P2", "subjects": ["p2.>"], "duplicate_window": 3 * SEC}),
        "with_max_age": await update(nc, {"name": "P3", "max_age": 60 * SEC}),
        "to_sources": await update(nc, {"name": "P4", "sources": [{"name": "X"}]}),
    }
    assert {key: outcome(reply) for key, reply in promoted.items()} == {
        "plain": config("P1"),
        "with_window": config("P2", subjects=["p2.>"], duplicate_window=3 * SEC),
        "with_max_age": config("P3", max_age=60 * SEC, duplicate_window=60 * SEC),
        "to_sources": sourcing("P4", sources=[{"name": "X"}]),
    }
    assert outcome(await api(nc, "$JS.API.STREAM.INFO.P1")) == config("P1")
    # A promoted stream (or any stream) cannot be given a mirror again.
    assert outcome(await update(nc, {"name": "P1", "mirror": M})) == NOT_UPDATABLE
    assert outcome(await update(nc, {"name": "P1", "subjects": ["P1"], "mirror": M})) == error(
        400, 10034, "stream mirrors can not contain subjects"
    )


async def test_source_updates(nc) -> None:
    assert "error" not in await create(nc, {"name": "S", "subjects": ["s"], "sources": [M]})
    changes = {
        "added": [M, {"name": "X", "filter_subject": "q"}],
        "bad_filter_not_checked": [{"name": "X", "filter_subject": "q..r"}],
        "duplicate": [M, M],
        "bad_name": [{"name": "a.b"}],
        "bad_transform": [{"name": "O", "subject_transforms": [{"src": "a.*", "dest": "$2"}]}],
        "removed": None,
    }
    got = {}
    for key, sources in changes.items():
        body: dict[str, Any] = {"name": "S", "subjects": ["s"]}
        if sources is not None:
            body["sources"] = sources
        got[key] = outcome(await update(nc, body))
    assert got == {
        "added": config("S", subjects=["s"], duplicate_window=OMIT, sources=[M, {"name": "X", "filter_subject": "q"}]),
        "bad_filter_not_checked": config(
            "S", subjects=["s"], duplicate_window=OMIT, sources=[{"name": "X", "filter_subject": "q..r"}]
        ),
        "duplicate": error(400, 10140, "duplicate source configuration detected"),
        "bad_name": error(400, 10141, "sourced stream name is invalid"),
        "bad_transform": error(
            400, 10146, "source transform: invalid mapping destination: wildcard index out of range in $2: [2]"
        ),
        "removed": config("S", subjects=["s"], duplicate_window=WINDOW),
    }
    # A stream without sources may get some; mirror_direct without a mirror is accepted by an update.
    assert "error" not in await create(nc, {"name": "E", "subjects": ["e"]})
    assert outcome(await update(nc, {"name": "E", "subjects": ["e"], "sources": [M], "mirror_direct": True})) == config(
        "E", subjects=["e"], duplicate_window=OMIT, sources=[M], mirror_direct=True
    )


async def test_configs_survive_a_restart(target: Target) -> None:
    nc = await nats.connect(target.url)
    bodies = [
        {"name": "M", "mirror": {"name": "O", "opt_start_time": "2024-01-02T03:04:05.25+02:00", "external": {}}},
        {
            "name": "S",
            "sources": [{"name": "O", "opt_start_seq": 4, "subject_transforms": [{"src": "a", "dest": "b"}]}],
        },
    ]
    before = [outcome(await create(nc, body)) for body in bodies]
    await nc.close()
    await target.restart()
    nc = await nats.connect(target.url)
    after = [outcome(await api(nc, f"$JS.API.STREAM.INFO.{body['name']}")) for body in bodies]
    # The same creates again are successes: the configs read back are the ones created.
    again = [outcome(await create(nc, body)) for body in bodies]
    await nc.close()
    assert after == before
    assert again == before
