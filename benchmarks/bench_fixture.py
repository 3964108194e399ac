"""Cost of the pytest fixtures: a fresh server per test, and the shared server's reset.

    python benchmarks/bench_fixture.py [--rounds 200]

``fakejs_server`` starts a fakejs server on a thread and stops it after the
test; its target is under 5 ms for setup plus teardown.  For comparison the
same is timed for a real nats-server subprocess (what ``--fakejs-target=real``
does per test).
"""

from __future__ import annotations

import argparse
import statistics

from harness import timed_ms

from fakejs.targets import FakeJS, RealNatsServer, find_nats_server

TARGET_MS = 5.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    for _ in range(5):  # warm up imports and the first thread
        FakeJS().start().stop()
    fresh = timed_ms(lambda: FakeJS().start().stop(), args.rounds)
    shared = FakeJS().start()
    reset = timed_ms(shared.reset, args.rounds)
    shared.stop()
    print(f"{'fixture':34} {'median':>9} {'p95':>9}")
    for name, samples in (("fakejs_server (start + stop)", fresh), ("fakejs_shared_server (reset)", reset)):
        ordered = sorted(samples)
        print(f"{name:34} {statistics.median(samples):>6.2f} ms {ordered[int(len(ordered) * 0.95)]:>6.2f} ms")
    if find_nats_server() is not None:
        real = timed_ms(lambda: RealNatsServer().start().stop(), max(args.rounds // 20, 3))
        print(f"{'real nats-server (start + stop)':34} {statistics.median(real):>6.2f} ms")
    verdict = "ok" if statistics.median(fresh) < TARGET_MS else "OVER TARGET"
    print(f"fakejs_server setup + teardown: {statistics.median(fresh):.2f} ms (target < {TARGET_MS} ms: {verdict})")


if __name__ == "__main__":
    main()
