"""``fakejs conformance run --client-cmd CMD``: judge a client program against the conformance scenarios.

Recognised only as the first argument (``fakejs conformance ...``), so every
nats-server command line keeps its meaning.  Exit status: 0 when no rule
failed, 1 when some rule failed, 2 on a usage error (an unknown scenario
included).  See :mod:`fakejs.cli.conformance_run` for what a run does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TextIO

from fakejs.cli.conformance_run import ScenarioRun, as_json, rule_rows, run_scenario, table
from fakejs.testkit.scenarios import CONFORMANCE_DIR, Scenario, ScenarioError, conformance_names, load_scenario

SUBCOMMAND = "conformance"
TAIL_LINES = 20  # lines of a failing client's output shown


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fakejs conformance",
        description="Run a client program against fakejs's conformance scenarios and report each rule.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="run")
    run = actions.add_parser("run", help="run the client against the scenarios")
    run.add_argument("--client-cmd", required=True, help="the client program, run through the shell")
    run.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME",
        help=f"a scenario to run (repeatable; default: all of {CONFORMANCE_DIR}/), by name or path",
    )
    run.add_argument("--json", action="store_true", help="print the results as JSON")
    return parser


def scenarios_named(names: Sequence[str]) -> list[Scenario]:
    """The scenarios to run: those named (``leadership``, ``conformance/leadership`` or a path), else all."""
    chosen = list(names) or conformance_names()
    found: list[Scenario] = []
    for name in chosen:
        shipped = name if name.startswith(CONFORMANCE_DIR + "/") or name.endswith(".toml") else None
        scenario = load_scenario(shipped or f"{CONFORMANCE_DIR}/{name}")
        if scenario.conformance is None:
            raise ScenarioError(f"{scenario.source}: no [conformance] table: not a conformance scenario")
        found.append(scenario)
    return found


async def run_all(scenarios: list[Scenario], command: str) -> list[ScenarioRun]:
    return [await run_scenario(scenario, command) for scenario in scenarios]


def main(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """``argv`` after the ``conformance`` word; the exit status."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        options = _parser().parse_args(list(argv))
    except SystemExit as end:
        return int(end.code or 0)
    try:
        scenarios = scenarios_named(options.scenario)
    except ScenarioError as exc:
        err.write(f"fakejs conformance: {exc}\n")
        return 2
    runs = asyncio.run(run_all(scenarios, options.client_cmd))
    rows = rule_rows(runs)
    if options.json:
        out.write(as_json(runs, rows) + "\n")
    else:
        out.write(table(rows) + "\n")
        for run in runs:
            if run.missing():
                out.write(f"{run.scenario}: not exercised: {', '.join(run.missing())}\n")
    for run in runs:
        if run.client_failed:
            err.write(_client_tail(run))
    return 1 if any(row.result == "FAIL" for row in rows) else 0


def _client_tail(run: ScenarioRun) -> str:
    how = "was killed (it ran past its duration)" if run.timed_out else f"exited {run.exit_code}"
    lines = [f"{run.scenario}: the client {how}"]
    for name, text in (("stderr", run.stderr), ("stdout", run.stdout)):
        tail = text.splitlines()[-TAIL_LINES:]
        if tail:
            lines.append(f"--- {name} (last {len(tail)} lines)")
            lines.extend(tail)
    return "\n".join(lines) + "\n"
