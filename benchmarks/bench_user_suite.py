"""A user's JetStream test suite, timed on fakejs and on nats-server.

    python benchmarks/bench_user_suite.py [--repeat 3]

Runs ``benchmarks/user_suite`` (about a hundred nats-py tests, a fresh
server per test from the ``fakejs_server`` fixture) as a pytest subprocess,
once as is (fakejs in-process) and once with ``--fakejs-target=real`` (a
nats-server process per test), and prints both wall times and the ratio
fakejs / nats-server.  With ``--repeat`` each is run that many times,
alternating, and the best run counts.  The target is a ratio of 0.5 or less.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SUITE = os.path.join("benchmarks", "user_suite")
TARGET_RATIO = 0.5


def run_suite(extra: list[str]) -> float:
    """Wall seconds of one pytest run of the suite; fails loudly if a test fails."""
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    command = [sys.executable, "-m", "pytest", SUITE, "-q", "-p", "no:cacheprovider", *extra]
    started = time.perf_counter()
    done = subprocess.run(command, check=False, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.stdout.write(done.stdout[-4000:])
        raise SystemExit(f"the suite failed ({' '.join(extra) or 'fakejs'}): exit status {done.returncode}")
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    print(f"  {'nats-server' if extra else 'fakejs':12} {elapsed:6.2f} s   {summary}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    fake: list[float] = []
    real: list[float] = []
    for _ in range(args.repeat):
        fake.append(run_suite([]))
        real.append(run_suite(["--fakejs-target=real"]))
    best_fake, best_real = min(fake), min(real)
    ratio = best_fake / best_real
    print(f"{'suite':14} {'fakejs':>9} {'nats-server':>12} {'ratio':>7}")
    print(f"{'user_suite':14} {best_fake:>7.2f} s {best_real:>10.2f} s {ratio:>7.2f}")
    verdict = "ok" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(f"fakejs / nats-server = {ratio:.2f} (target <= {TARGET_RATIO}: {verdict})")


if __name__ == "__main__":
    main()
