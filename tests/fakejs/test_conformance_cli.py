"""``fakejs --conformance``: a server started from the command line judges its clients, and says so over HTTP."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import urllib.request

import nats

from fakejs import cli
from tests.harness.command_line import finish, wait_ready


def test_the_flag_turns_the_watch_on() -> None:
    assert cli.command_line(["--conformance"]).options.conformance is True
    assert cli.command_line([]).options.conformance is False
    assert "--conformance" in cli.USAGE


async def test_command_line_server_reports_violations_over_http() -> None:
    argv = ["-p", "-1", "-m", "-1", "-js", "--conformance"]
    process = subprocess.Popen(
        [sys.executable, "-m", "fakejs", *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        log = await wait_ready(process)
        port = re.search(r"Listening for client connections on 127\.0\.0\.1:(\d+)", log).group(1)  # type: ignore[union-attr]
        http = re.search(r"Starting http monitor on 127\.0\.0\.1:(\d+)", log).group(1)  # type: ignore[union-attr]
        nc = await nats.connect(f"nats://127.0.0.1:{port}", name="go-app")
        js = nc.jetstream()
        await js.add_stream(name="S", subjects=["s"], storage="memory")
        await js.add_consumer("S", durable_name="C", ack_policy="explicit")
        inbox = nc.new_inbox()
        await nc.subscribe(inbox)
        await nc.publish("$JS.API.CONSUMER.MSG.NEXT.S.C", b'{"batch":5}', reply=inbox)
        await nc.flush()

        def get() -> dict:  # type: ignore[type-arg]
            with urllib.request.urlopen(f"http://127.0.0.1:{http}/fakejs/conformance", timeout=5) as response:
                return json.loads(response.read())  # type: ignore[no-any-return]

        report = await asyncio.to_thread(get)
        [violation] = report["violations"]
        assert violation["rule"] == "pull-expires"
        assert violation["client"]["name"] == "go-app"
        assert violation["bytes"].startswith("PUB $JS.API.CONSUMER.MSG.NEXT.S.C _INBOX.")
        assert report["watched"] is True and "pull-expires" in report["rules"]
        await nc.close()
        rc, _ = await finish(process, signal.SIGTERM)
        assert rc == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
