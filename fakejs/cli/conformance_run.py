"""Running a client program against the conformance scenarios, one in-process server each.

For every scenario: a fresh server on a free port with the conformance
watch on, the scenario's streams, consumers and fault steps, its
``[conformance]`` declarations told to the watch; then the client command
started through the shell with the environment the contract names
(``NATS_URL``, ``FAKEJS_STREAM``, ``FAKEJS_CONSUMER``, ``FAKEJS_MODE``,
``FAKEJS_ACK``, ``FAKEJS_GROUP``, ``FAKEJS_MAX_MESSAGES``,
``FAKEJS_EXPIRES_MS``, ``FAKEJS_HEARTBEAT_MS``, ``FAKEJS_DURATION_MS``),
the scenario's messages published (before it starts, or spread over the
run), the client awaited (killed ``KILL_GRACE`` seconds after its duration)
and the watch's report kept.  :func:`rule_rows` folds the runs into one
result per rule.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass, field
from typing import Any

from fakejs.server.server import Server
from fakejs.testkit.conformance import RULES, ConformanceReport
from fakejs.testkit.scenario_conformance import ConformancePlan
from fakejs.testkit.scenarios import Scenario

KILL_GRACE = 5.0  # seconds a client may run past its duration before it is killed
CLIENT_NAME = "conformance-client"
SPREAD_SHARE = 0.7  # spread messages go out over this share of the duration (the rest is for consuming them)
EVIDENCE_CHARS = 80  # bytes of a violation shown in the table


@dataclass
class ScenarioRun:
    """One scenario's outcome: the watch's report and how the client ended."""

    scenario: str
    plan: ConformancePlan
    report: ConformanceReport
    exit_code: int | None = None
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""
    published: int = 0

    @property
    def client_failed(self) -> bool:
        return self.timed_out or self.exit_code != 0

    def missing(self) -> list[str]:
        """The rules the scenario is for that it gave nothing to judge."""
        return [rule for rule in self.plan.rules if not self.report.exercised.get(rule)]

    def describe(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "published": self.published,
            "client_output": _last_line(self.stdout),
            "rules": self.plan.rules,
            "not_exercised": self.missing(),
            "exercised": self.report.exercised,
            "violations": [v.describe() for v in self.report.violations],
            "suppressed": self.report.suppressed,
        }


@dataclass
class RuleRow:
    """One rule across every run: ``pass``, ``FAIL`` or ``not exercised``, and why."""

    rule: str
    result: str
    evidence: str
    exercised: int = 0
    scenarios: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "result": self.result,
            "evidence": self.evidence,
            "exercised": self.exercised,
            "scenarios": self.scenarios,
        }


def client_environment(server: Server, scenario: Scenario, plan: ConformancePlan) -> dict[str, str]:
    """The variables the contract gives a client program (on top of the runner's own)."""
    return {
        "NATS_URL": f"nats://127.0.0.1:{server.port}",
        "FAKEJS_STREAM": stream_of(scenario),
        "FAKEJS_CONSUMER": "" if plan.mode == "ordered" else consumer_of(scenario),
        "FAKEJS_MODE": plan.mode,
        "FAKEJS_ACK": plan.ack,
        "FAKEJS_GROUP": plan.group,
        "FAKEJS_MAX_MESSAGES": str(plan.max_messages),
        "FAKEJS_EXPIRES_MS": str(plan.expires_ms),
        "FAKEJS_HEARTBEAT_MS": str(plan.heartbeat_ms),
        "FAKEJS_DURATION_MS": str(plan.duration_ms),
    }


def stream_of(scenario: Scenario) -> str:
    return str(scenario.streams[0].get("name", "")) if scenario.streams else ""


def consumer_of(scenario: Scenario) -> str:
    for entry in scenario.consumers:
        config = entry.get("config", {})
        name = config.get("durable_name") or config.get("name")
        if name:
            return str(name)
    return ""


async def run_scenario(scenario: Scenario, command: str) -> ScenarioRun:
    """Run ``command`` as the client of one scenario on a server of its own."""
    plan = scenario.conformance or ConformancePlan()
    server = Server(port=0, conformance=True)
    await server.start()
    try:
        scenario.start(server.control)
        watch = server.conformance_watch
        consumer = consumer_of(scenario)
        if watch is not None and consumer and plan.mode != "ordered":
            watch.expect(stream_of(scenario), consumer, consume=plan.consume, ack_sync=plan.ack_sync)
        run = ScenarioRun(scenario.name, plan, ConformanceReport())
        if plan.publish == "upfront":
            run.published = _publish(server, plan, plan.messages)
        environment = {**os.environ, **client_environment(server, scenario, plan)}
        process = await asyncio.create_subprocess_shell(
            command,
            env=environment,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group: a kill reaches what the shell started
        )
        spreading = asyncio.ensure_future(_spread(server, plan, run)) if plan.publish == "spread" else None
        try:
            output = await _wait(process, plan.duration_ms / 1000 + KILL_GRACE, run)
        finally:
            if spreading is not None:
                spreading.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await spreading
        run.stdout, run.stderr = (part.decode("utf-8", "replace") for part in output)
        run.exit_code = process.returncode
        run.report = server.conformance()
        return run
    finally:
        await server.stop()


async def _wait(process: asyncio.subprocess.Process, timeout: float, run: ScenarioRun) -> tuple[bytes, bytes]:
    """The client's output once it exits, or once it has been killed for overrunning."""
    try:
        return await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        run.timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        return await process.communicate()


def _publish(server: Server, plan: ConformancePlan, count: int, first: int = 0) -> int:
    """Publish ``count`` messages to the scenario's subject from inside the server (no client sees it)."""
    for number in range(first, first + count):
        reply = server.control.api(plan.subject, {"n": number + 1})
        if "error" in reply:
            raise RuntimeError(f"publishing to {plan.subject}: {reply['error'].get('description')}")
    return count


async def _spread(server: Server, plan: ConformancePlan, run: ScenarioRun) -> None:
    """One message at a time, evenly over the first part of the run."""
    if not plan.messages:
        return
    interval = plan.duration_ms / 1000 * SPREAD_SHARE / plan.messages
    for number in range(plan.messages):
        await asyncio.sleep(interval)
        run.published += _publish(server, plan, 1, number)


def rule_rows(runs: list[ScenarioRun]) -> list[RuleRow]:
    """Every rule's result over all the runs, in the rules' order."""
    rows: list[RuleRow] = []
    for rule in RULES:
        exercised = sum(run.report.exercised.get(rule, 0) for run in runs)
        scenarios = [run.scenario for run in runs if run.report.exercised.get(rule) or run.report.of(rule)]
        failed = next((run for run in runs if run.report.of(rule)), None)
        if failed is not None:
            violation = failed.report.of(rule)[0]
            evidence = violation.evidence_line(EVIDENCE_CHARS)
            rows.append(
                RuleRow(rule, "FAIL", f"{failed.scenario}: {violation.detail}: {evidence}", exercised, scenarios)
            )
        elif exercised:
            rows.append(RuleRow(rule, "pass", f"exercised {exercised} time(s)", exercised, scenarios))
        else:
            rows.append(RuleRow(rule, "not exercised", "", 0, scenarios))
    return rows


def table(rows: list[RuleRow]) -> str:
    """The rows as aligned text columns."""
    header = ("rule", "result", "evidence")
    width_rule = max(len(header[0]), *(len(row.rule) for row in rows))
    width_result = max(len(header[1]), *(len(row.result) for row in rows))
    lines = [f"{header[0]:<{width_rule}}  {header[1]:<{width_result}}  {header[2]}"]
    lines.append(f"{'-' * width_rule}  {'-' * width_result}  {'-' * 8}")
    lines.extend(f"{row.rule:<{width_rule}}  {row.result:<{width_result}}  {row.evidence}".rstrip() for row in rows)
    return "\n".join(lines)


def as_json(runs: list[ScenarioRun], rows: list[RuleRow]) -> str:
    return json.dumps(
        {
            "failed": any(row.result == "FAIL" for row in rows),
            "rules": [row.describe() for row in rows],
            "scenarios": [run.describe() for run in runs],
        },
        indent=2,
    )


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
