"""JetStream publishes into streams with a subject transform and republish, against plain streams.

    python benchmarks/bench_stream_features.py [--repeat 3] [--only transform]

Each workload publishes 20,000 messages (500 in flight) spread over 10 or
5,000 subjects into a memory stream, either plain or with a
``subject_transform`` (``in.*.x`` -> ``out.{{wildcard(1)}}.{{partition(8,1)}}``)
and a ``republish`` of every stored message; values are publishes per second
(higher is better), side by side with nats-server.  The cost of a transform
and a republish is per message: the rate must not fall as subjects grow.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import nats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Workload, main

MESSAGES = 20_000
IN_FLIGHT = 500
PLAIN: dict[str, Any] = {"subjects": ["in.>"], "storage": "memory"}
FEATURES: dict[str, Any] = {
    **PLAIN,
    "subject_transform": {"src": "in.*.x", "dest": "out.{{wildcard(1)}}.{{partition(8,1)}}"},
    "republish": {"src": ">", "dest": "rp.>"},
}


def publishes(name: str, config: dict[str, Any], subjects: int) -> Workload:
    async def workload(url: str) -> float:
        nc = await nats.connect(url)
        js = nc.jetstream()
        await nc.request(f"$JS.API.STREAM.DELETE.{name}", b"")
        await nc.request(f"$JS.API.STREAM.CREATE.{name}", json.dumps({"name": name, **config}).encode())
        loop = asyncio.get_running_loop()
        started = loop.time()
        for first in range(0, MESSAGES, IN_FLIGHT):
            batch = range(first, min(first + IN_FLIGHT, MESSAGES))
            await asyncio.gather(*(js.publish(f"in.{i % subjects}.x", b"x") for i in batch))
        elapsed = loop.time() - started
        await nc.request(f"$JS.API.STREAM.DELETE.{name}", b"")
        await nc.close()
        return MESSAGES / elapsed

    return workload


WORKLOADS = {
    "plain, 10 subjects": ("msg/s", publishes("P", PLAIN, 10)),
    "plain, 5000 subjects": ("msg/s", publishes("P", PLAIN, 5000)),
    "transform+republish, 10 subjects": ("msg/s", publishes("T", FEATURES, 10)),
    "transform+republish, 5000 subjects": ("msg/s", publishes("T", FEATURES, 5000)),
}

if __name__ == "__main__":
    main(WORKLOADS)
