"""``fakejs-parity``: run a parity campaign, replay a reproduction, show a seed's operations.

::

    fakejs-parity run --seeds 1000 [--master local[*] | spark://host:7077 | --local]
                      [--ops-per-seed 20] [--out parity-report]
    fakejs-parity replay parity-report/repro/g1.json
    fakejs-parity generate 42

``replay`` exits with status 1 while the reproduction still diverges and 0
once both servers agree, so it can guard a fix like a failing test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from fakejs.parity import report as reports
from fakejs.parity.campaign import Engine, LocalEngine, Settings, SparkEngine, log, run_campaign
from fakejs.parity.executor import DEFAULT_INJECTION
from fakejs.parity.operations import generate
from fakejs.parity.reproduce import replay


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fakejs-parity", description="Differential parity campaigns: fakejs against nats-server."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run seeds on both servers and write a parity report")
    run.add_argument("--seeds", type=int, required=True, help="how many seeds (sequences) to run")
    run.add_argument("--first-seed", type=int, default=0, help="the first seed (default 0)")
    run.add_argument("--ops-per-seed", type=int, default=20, help="operations per sequence (default 20)")
    run.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    run.add_argument("--local", action="store_true", help="no Spark: local processes (see --workers)")
    run.add_argument(
        "--workers", type=int, default=None, help="processes for --local (default: CPU count; 1 runs in this process)"
    )
    run.add_argument(
        "--partitions", type=int, default=None, help="how many tasks to cut the seeds into (default: a few per core)"
    )
    run.add_argument("--out", default="parity-report", help="report directory (default parity-report)")
    run.add_argument(
        "--shrink",
        choices=("group", "all", "none"),
        default="group",
        help="reproductions: one per group (default), all, none",
    )
    run.add_argument(
        "--shrink-budget", type=int, default=250, help="fresh-server runs allowed per reproduction (default 250)"
    )
    run.add_argument(
        "--nats-server", default=None, help="the real nats-server binary (default: PATH, or next to python)"
    )
    run.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark configuration")
    run.add_argument(
        "--inject-divergence", nargs="?", const="default", default=None, metavar="JSON",
        help="testing the pipeline: make fakejs diverge on purpose (a fault spec as JSON; default: an extra field in STREAM.INFO replies)",
    )  # fmt: skip
    run.add_argument("--quiet", action="store_true", help="no progress lines")

    rep = sub.add_parser("replay", help="run a reproduction (or every one in a report.json) again")
    rep.add_argument("file", help="a repro/*.json file, or report.json")
    rep.add_argument("--attempts", type=int, default=1, help="runs per reproduction (default 1)")
    rep.add_argument("--nats-server", default=None, help="the real nats-server binary")

    gen = sub.add_parser("generate", help="print the operations a seed stands for, as JSON")
    gen.add_argument("seed", type=int)
    gen.add_argument("--ops-per-seed", type=int, default=20)
    return parser


def _engine(args: argparse.Namespace) -> Engine:
    if args.local:
        return LocalEngine(args.workers)
    conf = dict(item.split("=", 1) for item in args.spark_conf)
    return SparkEngine(args.master, conf)


def _inject(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    if value == "default":
        return dict(DEFAULT_INJECTION)
    return dict(json.loads(value))


def cmd_run(args: argparse.Namespace) -> int:
    settings = Settings(
        seeds=args.seeds,
        first_seed=args.first_seed,
        ops_per_seed=args.ops_per_seed,
        inject=_inject(args.inject_divergence),
        binary=args.nats_server,
        shrink=args.shrink,
        shrink_budget=args.shrink_budget,
        quiet=args.quiet,
    )
    engine = _engine(args)
    try:
        outcome = run_campaign(settings, engine, args.partitions)
    finally:
        engine.close()
    doc = reports.build(outcome)
    paths = reports.write(doc, args.out)
    print(reports.headline(doc))
    for group in doc["groups"]:
        where = f" -> {group['reproduction_file']}" if group.get("reproduction_file") else ""
        print(
            f"  {group['id']}: {group['api']} ({group['feature']}, status {group['status_code']}, at {group['difference']}): {group['count']}{where}"
        )
    print(f"report: {paths['markdown']}, {paths['html']}, {paths['json']}")
    return 0


def _reproductions(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if "operations" in doc:
        return [doc]
    return [g["reproduction"] for g in doc.get("groups", []) if g.get("reproduction")]


def cmd_replay(args: argparse.Namespace) -> int:
    with open(args.file) as handle:
        doc = json.load(handle)
    diverging = 0
    for repro in _reproductions(doc):
        result = asyncio.run(replay(repro, args.nats_server, args.attempts))
        where = f"seed {repro.get('seed')}, {len(repro['operations'])} operations"
        if result["still_diverges"]:
            diverging += 1
            div = result["divergence"]
            same = "the same divergence" if result["same_divergence"] else "a different divergence"
            print(
                f"DIVERGES ({where}): {same} at operation {div['index']} {div['subject']} ({result['diverged']}/{result['attempts']} runs)"
            )
            print(f"  fake: {json.dumps(div['fake_reply'])}")
            print(f"  real: {json.dumps(div['real_reply'])}")
        else:
            print(f"AGREES ({where}): both servers answered every operation alike ({result['attempts']} runs)")
    return 1 if diverging else 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        return cmd_run(args)
    if args.command == "replay":
        return cmd_replay(args)
    json.dump(generate(args.seed, args.ops_per_seed), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        log("interrupted")
        sys.exit(130)
