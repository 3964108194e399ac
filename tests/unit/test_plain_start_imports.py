"""A plain start imports only what it runs.

``fakejs -p -1 -js -sd DIR`` is what a client library's test harness execs for
every test.  Such a server has no cluster, no operator mode, no configuration
file, no TLS, websocket or monitoring port, and nobody has asked it for a fault,
a reload or a ``$JS.API`` request yet: the modules of those features are
imported where a server that uses them needs them (see
``tests/unit/test_local_imports.py`` for the comments saying so).  This test
reads the modules the real command line imported up to its ready line
(``python -X importtime``) and fails when one of those features is imported at
start again.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

READY = "Server is ready"

# What a plain start on a new store directory must not import: each a module, or a package and
# everything in it.
NOT_AT_START = (
    "fakejs.core.cluster",  # the routes of a cluster
    "fakejs.core.msgtrace_route",
    "fakejs.core.jwt",  # operator mode
    "fakejs.core.account_claims",
    "fakejs.core.callout",
    "fakejs.core.imports",  # accounts' exports and imports
    "fakejs.core.configfile",  # -c FILE
    "fakejs.conf",
    "fakejs.monitoring.claims",  # the account resolver: operator mode, or the first account update
    "fakejs.monitoring.claims_pack",
    "fakejs.monitoring.endpoints",  # the monitoring documents: the first HTTP request
    "fakejs.jetstream.api.routes",  # the $JS.API route table: the first request
    "fakejs.jetstream.stream.stream",  # streams and their stores: the first stream, or a store to recover
    "fakejs.jetstream.stream.batch",
    "fakejs.jetstream.stream.fast_batch",
    "fakejs.jetstream.storage",
    "fakejs.jetstream.config.stream",
    "fakejs.testkit.conformance",  # conformance=True
    "fakejs.testkit.arguments",  # the first fault
    "fakejs.testkit.schema",
    "fakejs.testkit.control",  # the first control request
    "fakejs.testkit.scenarios",  # --scenario
    "fakejs.server.reload",  # the first reload
    "fakejs.core.reload_options",
    "fakejs.core.reload_websocket",
    "fakejs.server.reload_steps",
    "fakejs.server.routes",
    "fakejs.server.http",  # -m PORT
    "fakejs.server.control_http",
    "fakejs.server.websocket",
    "fakejs.server.wslistener",
    "fakejs.server.tls",
    "fakejs.cli.cluster_size",
    "fakejs.cli.cluster_flags",  # a route flag or a file's cluster {}
    "fakejs.core.cluster_config",
    "fakejs.core.transport_config",  # TLS or websocket settings
    "fakejs.core.tls_files",
    "fakejs.core.resolver_directory",  # resolver { type: full | cache }
    "fakejs.core.replicated_jetstream",  # JetStream replicated across processes (set by code)
    "fakejs.core.account_config",  # accounts { }, or an account JWT
    "fakejs.core.mappings",  # an account's mappings { }
    "fakejs.core.subject_transform",
    "fakejs.core.transform_functions",
    "fakejs.monitoring.leafz",  # the first leaf that closes, or the first /leafz
    "calendar",
    "fakejs.cli.selfsigned",
    "fakejs.cli.demo",
    "fakejs.cli.conformance",
    "zoneinfo",  # Nats-Schedule-Time-Zone
    "cramjam",  # snappy-compressed message trace events
)

# Classes a plain start makes many of, or imports for nothing: plain classes, as a dataclass is
# compiled at import (its generated methods cost each start about half a millisecond).
NOT_DATACLASSES = (
    "fakejs.gocompat.goflag.Flag",
    "fakejs.gocompat.goflag.Parsed",
    "fakejs.server.start_lines.Facts",
    "fakejs.jetstream.stream.batch_limits.BatchLimits",
    "fakejs.jetstream.stream.batch_limits.FastBatchLimits",
    "fakejs.testkit.faults.Hit",
    "fakejs.testkit.transcript.Transcript",
    "fakejs.cli.settings.CommandLine",
    "fakejs.gocompat.gourl.GoURL",
    "fakejs.protocol.events.Connect",
    "fakejs.protocol.events.Pub",
    "fakejs.protocol.events.Sub",
    "fakejs.protocol.events.Ping",
    "fakejs.gocompat.gostruct.Field",
    "fakejs.gocompat.gostruct.Struct",
    "fakejs.core.failures.ServerError",
    "fakejs.core.subject_transform._Token",
    "fakejs.core.transform_functions.Placeholder",
    "fakejs.core.mappings._Choice",
    "fakejs.jetstream.internal_client.InternalClient",
    "fakejs.jetstream.service.server_limits.ServerLimits",
)

# Counts the dataclasses made while it imports the modules named on its standard input, one a line.
_DATACLASS_PROBE = """
import dataclasses, importlib, sys
made = []
process = dataclasses._process_class
def counted(cls, *args, **kwargs):
    made.append(cls.__module__ + "." + cls.__qualname__)
    return process(cls, *args, **kwargs)
dataclasses._process_class = counted
for name in sys.stdin.read().split():
    importlib.import_module(name)
print("\\n".join(made))
"""

# What it does import: the server and its JetStream (so an empty reading cannot pass).
AT_START = ("fakejs.cli", "fakejs.server.server", "fakejs.core.broker", "fakejs.jetstream.service.jetstream")


def plain_start_imports(store: Path) -> set[str]:
    """The modules ``python -X importtime -m fakejs -p -1 -js -sd STORE`` imported until it was ready."""
    command = [sys.executable, "-X", "importtime", "-m", "fakejs", "-p", "-1", "-js", "-sd", str(store)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    lines: list[str] = []
    try:
        for line in process.stderr:
            lines.append(line)
            if READY in line:
                break
    finally:
        process.terminate()
        process.communicate(timeout=60)
    assert any(READY in line for line in lines), "".join(lines[-20:])
    return {line.split("|")[2].strip() for line in lines if line.startswith("import time:") and "|" in line}


def imported_at_start(name: str, modules: set[str]) -> list[str]:
    return sorted(module for module in modules if module == name or module.startswith(name + "."))


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    return plain_start_imports(tmp_path_factory.mktemp("store"))


def test_a_plain_start_imports_the_server_and_its_jetstream(modules: set[str]) -> None:
    assert set(AT_START) <= modules


@pytest.mark.parametrize("name", NOT_AT_START)
def test_a_plain_start_does_not_import_what_it_does_not_run(name: str, modules: set[str]) -> None:
    assert importlib.util.find_spec(name) is not None, f"{name} is no module: this list names one gone"
    assert not imported_at_start(name, modules), f"a plain start imports {imported_at_start(name, modules)}"


def test_a_plain_start_makes_no_dataclass_of_its_plain_classes(modules: set[str]) -> None:
    names = "\n".join(sorted(module for module in modules if module.startswith("fakejs")))
    probe = subprocess.run(
        [sys.executable, "-c", _DATACLASS_PROBE], input=names, capture_output=True, text=True, check=True, timeout=120
    )
    made = set(probe.stdout.split())
    assert "fakejs.core.options.ServerOptions" in made  # the probe sees the start's dataclasses
    assert not made & set(NOT_DATACLASSES)
