"""``fakejs conformance run``: the shipped conformance scenarios, and the runner judging client programs.

Pinned here: every scenario in ``scenarios/conformance/`` loads, carries a
checked ``[conformance]`` table and is found by name (``conformance/NAME``)
as a control request names it; a broken table is refused naming the key; a
client that pulls without expires and over max_batch gets FAIL rows with the
scenario, the detail and the bytes, and exit status 1; the reference
adapter (``tests/conformance/reference_client.py`` over ``Consume``) passes
what its scenarios exercise, exit status 0; ``--json`` has the same rows;
usage errors exit 2; nats-server's command line is untouched.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from fakejs import cli
from fakejs.cli import conformance
from fakejs.testkit.conformance import RULES
from fakejs.testkit.scenarios import ScenarioError, conformance_names, find_named, load_scenario, load_scenario_text

REFERENCE = Path(__file__).resolve().parents[1] / "conformance" / "reference_client.py"
EXPECTED = {
    "steady",
    "expiry",
    "heartbeats",
    "consumer-deleted",
    "leadership",
    "reconnect",
    "max-waiting",
    "pinned",
    "ack-sync",
    "term",
    "ordered",
}

# Pulls once, without expires and over the consumer's max_batch, and never again.
WRONG_CLIENT = """
import asyncio, json, os, nats

async def main():
    nc = await nats.connect(os.environ["NATS_URL"], name="conformance-client")
    inbox = nc.new_inbox()
    got = []

    async def received(msg):
        got.append(msg)

    await nc.subscribe(inbox, cb=received)
    subject = "$JS.API.CONSUMER.MSG.NEXT." + os.environ["FAKEJS_STREAM"] + "." + os.environ["FAKEJS_CONSUMER"]
    await nc.publish(subject, json.dumps({"batch": 50}).encode(), reply=inbox)
    await asyncio.sleep(int(os.environ["FAKEJS_DURATION_MS"]) / 1000)
    await nc.close()
    print(json.dumps({"received": len(got), "errors": []}))

asyncio.run(main())
"""


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = conformance.main(argv, out, err)
    return status, out.getvalue(), err.getvalue()


def rows_of(text: str) -> dict[str, tuple[str, str]]:
    """The table's rows: rule -> (result, evidence)."""
    rows: dict[str, tuple[str, str]] = {}
    for line in text.splitlines()[2:]:
        rule, _, rest = line.partition("  ")
        if rule in RULES:
            rest = rest.strip()
            result = "not exercised" if rest.startswith("not exercised") else rest.split()[0]
            rows[rule] = (result, rest[len(result) :].strip())
    return rows


@pytest.fixture
def wrong_client(tmp_path: Path) -> str:
    script = tmp_path / "wrong_client.py"
    script.write_text(WRONG_CLIENT)
    return f"{sys.executable} {script}"


# -- scenarios ---------------------------------------------------------------------------------


def test_every_conformance_scenario_loads_and_is_found_by_name() -> None:
    names = conformance_names()
    repository = Path(__file__).resolve().parents[2]
    assert names == sorted(f"conformance/{path.stem}" for path in (repository / "scenarios/conformance").glob("*.toml"))
    package_data = tomllib.loads((repository / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "conformance/*.toml" in package_data["fakejs.scenarios"]  # they ship in the wheel
    assert {name.removeprefix("conformance/") for name in names} == EXPECTED
    for name in names:
        scenario = load_scenario(name)
        plan = scenario.conformance
        assert plan is not None, name
        assert plan.rules and set(plan.rules) <= set(RULES), name
        assert scenario.streams[0]["name"] == "ORDERS"
        assert plan.subject == "orders.conformance"
        assert find_named(name, []).name == scenario.name  # as a control request names it
    covered = {rule for name in names for rule in load_scenario(name).conformance.rules}  # type: ignore[union-attr]
    assert covered == set(RULES)


def test_declarations_follow_mode_and_ack() -> None:
    ack_sync = load_scenario("conformance/ack-sync").conformance
    ordered = load_scenario("conformance/ordered").conformance
    steady = load_scenario("conformance/steady").conformance
    assert ack_sync is not None and ack_sync.ack_sync and ack_sync.consume
    assert ordered is not None and (ordered.mode, ordered.ack, ordered.consume) == ("ordered", "none", False)
    assert steady is not None and (steady.publish, steady.messages, steady.ack_sync) == ("spread", 30, False)


def test_a_name_may_not_climb_out_of_the_conformance_directory() -> None:
    for name in ("conformance/../consumer-deleted", "conformance/x/y", "conformance/"):
        with pytest.raises(ScenarioError, match="no scenario named"):
            find_named(name, [])


@pytest.mark.parametrize(
    ("table", "error"),
    [
        ("speed = 3", "unknown conformance key 'speed'"),
        ('mode = "push"', "conformance 'mode' must be \"consume\" or \"ordered\", not 'push'"),
        ("expires_ms = 0", "conformance 'expires_ms' must be milliseconds > 0"),
        ('rules = ["pull-everything"]', "unknown rule 'pull-everything'"),
        ('mode = "ordered"\nack = "sync"', "'ack' must be \"none\" for an ordered consumer"),
        ("consume = 1", "conformance 'consume' must be true or false"),
    ],
)
def test_a_broken_conformance_table_is_refused_naming_the_key(table: str, error: str) -> None:
    text = f'name = "x"\n\n[conformance]\n{table}\n'
    with pytest.raises(ScenarioError) as refused:
        load_scenario_text(text, "x.toml")
    assert error in str(refused.value)
    assert str(refused.value).startswith("x.toml:3: ")


# -- the runner ----------------------------------------------------------------------------------


def test_a_wrong_client_fails_with_evidence(wrong_client: str) -> None:
    status, out, err = run(["run", "--client-cmd", wrong_client, "--scenario", "steady"])
    assert status == 1, out + err
    rows = rows_of(out)
    assert set(rows) == set(RULES)
    result, evidence = rows["pull-expires"]
    assert result == "FAIL"
    assert evidence.startswith("conformance/steady: ")
    assert "PUB $JS.API.CONSUMER.MSG.NEXT.ORDERS.worker" in evidence
    assert rows["pull-limits"][0] == "FAIL"
    assert "50" in rows["pull-limits"][1]
    assert rows["ack-sync"] == ("not exercised", "")
    assert "conformance/steady: not exercised: pull-buffer, pull-threshold" in out


def test_the_reference_client_passes() -> None:
    command = f"{sys.executable} {REFERENCE}"
    status, out, err = run(
        ["run", "--client-cmd", command, "--scenario", "consumer-deleted", "--scenario", "term", "--json"]
    )
    assert status == 0, out + err
    report = json.loads(out)
    assert report["failed"] is False
    rules = {row["rule"]: row for row in report["rules"]}
    assert list(rules) == list(RULES)
    for rule in ("terminal-stops", "no-ack-after-term", "pull-expires", "heartbeat-configured"):
        assert rules[rule]["result"] == "pass", rules[rule]
        assert rules[rule]["exercised"] > 0
        assert rules[rule]["evidence"] == f"exercised {rules[rule]['exercised']} time(s)"
    assert rules["ordered-reset"]["result"] == "not exercised"
    assert [s["scenario"] for s in report["scenarios"]] == ["conformance/consumer-deleted", "conformance/term"]
    for scenario in report["scenarios"]:
        assert scenario["exit_code"] == 0 and not scenario["timed_out"]
        assert scenario["not_exercised"] == [] and scenario["violations"] == []
    deleted, term = (json.loads(scenario["client_output"]) for scenario in report["scenarios"])
    assert deleted == {"received": 3, "errors": ["Consumer Deleted"]}
    assert term == {"received": 10, "errors": []}
    assert "time(s)" not in err


@pytest.mark.slow
def test_the_reference_client_passes_every_rule_in_every_scenario() -> None:
    """The repository's ADR-37 loop (tests/harness/consume.py, ordered.py) under the whole scenario set."""
    status, out, err = run(["run", "--client-cmd", f"{sys.executable} {REFERENCE}", "--json"])
    report = json.loads(out)
    failed = {row["rule"]: row["evidence"] for row in report["rules"] if row["result"] != "pass"}
    assert status == 0 and failed == {}, (failed, err)
    assert len(report["scenarios"]) == len(conformance_names())
    for scenario in report["scenarios"]:
        assert scenario["exit_code"] == 0 and not scenario["timed_out"], scenario
        assert scenario["not_exercised"] == [] and scenario["violations"] == [], scenario


def test_json_has_the_rows_and_the_violations(wrong_client: str) -> None:
    status, out, _ = run(["run", "--client-cmd", wrong_client, "--scenario", "conformance/steady", "--json"])
    assert status == 1
    report = json.loads(out)
    assert set(report) == {"failed", "rules", "scenarios"}
    assert report["failed"] is True
    row = next(row for row in report["rules"] if row["rule"] == "pull-expires")
    assert set(row) == {"rule", "result", "evidence", "exercised", "scenarios"}
    assert row["result"] == "FAIL" and row["scenarios"] == ["conformance/steady"]
    (scenario,) = report["scenarios"]
    assert {v["rule"] for v in scenario["violations"]} >= {"pull-expires", "pull-limits"}
    assert json.loads(scenario["client_output"])["errors"] == []


def test_a_failing_client_shows_its_output() -> None:
    command = f"{sys.executable} -c \"import sys; print('partial'); sys.exit('boom')\""
    status, out, err = run(["run", "--client-cmd", command, "--scenario", "term"])
    assert status == 0  # nothing was pulled: no rule broken, none exercised
    assert rows_of(out)["no-ack-after-term"] == ("not exercised", "")
    assert "conformance/term: the client exited 1" in err
    assert "boom" in err and "partial" in err


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["run"],
        ["walk", "--client-cmd", "true"],
        ["run", "--client-cmd", "true", "--scenario", "no-such-scenario"],
        ["run", "--client-cmd", "true", "--scenario", "consumer-deleted.toml"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance.main(argv, io.StringIO(), io.StringIO()) == 2


def test_the_subcommand_is_only_the_first_argument() -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "fakejs", "conformance", "run"], check=False, capture_output=True, text=True, timeout=60
    )
    assert finished.returncode == 2
    assert "--client-cmd" in finished.stderr
    assert cli.command_line(["-p", "4333", "-js"]).options.port == 4333
