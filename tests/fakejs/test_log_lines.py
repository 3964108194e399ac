"""Log lines, side by side: ``python -m fakejs`` and ``nats-server`` started with the same flags.

Each test starts both programs with the same arguments (free ports, its own
directories), does the same thing to both, reads their stderr and compares
the lines once the timestamp, the pid and the values that legitimately
differ are replaced by placeholders: server ids and names, ports, paths,
Git commit and Go version, durations, the free disk space (it moves while
the tests run), client ids (nats-server's internal clients take ``cid:1``
to ``cid:4``).  fakejs's own lines (``fakejs: ...``) are checked apart.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
from collections.abc import Callable, Sequence
from itertools import zip_longest
from pathlib import Path

import nats
import pytest

from fakejs.cli.event_loop import AUTO, loop_factory
from fakejs.core.trace import client_label, redact_connect
from fakejs.gocompat.gobytes import friendly_bytes
from tests.harness.targets import server_command

WAIT = 30.0  # seconds a log line may take to appear (two cores, other tests beside)
STAMP = re.compile(r"^\[\d+\] \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{6} ")
SUBSTITUTIONS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"^(\[INF\]   Version:  2\.15\.1).*", r"\1"),
        (r"^(\[INF\]   Git:      )\[.*\]$", r"\1[<commit>]"),
        (r"^(\[DBG\]   Go build: ).*", r"\1<runtime>"),
        (r"^(\[INF\]   (Name|ID|Node): +).*", r"\1<\2>"),
        (r"(127\.0\.0\.1):\d+", r"\1:<port>"),
        (r"\bcid:\d+", "cid:<n>"),
        (r'(Store Directory: )".*"', r'\1"<store>"'),
        (r"(Max Storage: +)\S+ \S+", r"\1<disk>"),
        (r"(memory, )\S+ \S+( disk)", r"\1<disk>\2"),
        (r"^(\[INF\] Took ).* (to start JetStream)$", r"\1<duration> \2"),
        (r"(messages for stream '.*' in ).*", r"\1<duration>"),
    )
)


def normalise(line: str) -> str:
    line = STAMP.sub("", line)
    for pattern, replacement in SUBSTITUTIONS:
        line = pattern.sub(replacement, line)
    return line


def own(line: str) -> bool:
    """fakejs's own lines, which nats-server does not have."""
    return "] fakejs: " in line


INTERNAL_CLOSE = "JETSTREAM - JetStream connection closed"
RACING = ("[DBG] Client accept loop exiting..", "[DBG] SYSTEM - System connection closed: Client Closed")


def compared(lines: Sequence[str], keep: Callable[[str], bool] = lambda line: True) -> list[str]:
    """The lines to compare, normalised.

    nats-server's internal JetStream clients log their close from their own
    goroutines, some after ``JetStream Shutdown``, and on a busy machine the
    process may exit before the last of them has: they are one line here,
    right after ``Initiating JetStream Shutdown...``, where they start (see
    :func:`internal_closes` for their number); two other lines of its
    shutdown come in either order, and are put in one.
    """
    kept = [normalise(line) for line in lines if not own(line) and keep(line)]
    closes = [line for line in kept if INTERNAL_CLOSE in line]
    kept = [line for line in kept if INTERNAL_CLOSE not in line]
    if closes:
        at = kept.index("[INF] Initiating JetStream Shutdown...") + 1
        kept[at:at] = closes[:1]
    # Two goroutines end as the listeners close, in either order.
    racing = [i for i, line in enumerate(kept) if line in RACING]
    for i, line in zip(racing, sorted(kept[i] for i in racing)):
        kept[i] = line
    return kept


def internal_closes(lines: Sequence[str]) -> int:
    """How many internal JetStream clients logged their close."""
    return sum(INTERNAL_CLOSE in line for line in lines)


class Logged:
    """A server process whose stderr is read line by line as it comes."""

    def __init__(self, kind: str, args: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.kind = kind
        self.args = [*server_command(kind), *args]
        self.cwd = cwd
        self.env = {**os.environ, **(env or {})}
        self.lines: list[str] = []
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._news = asyncio.Event()

    async def start(self) -> Logged:
        self.cwd.mkdir(parents=True, exist_ok=True)
        self._process = await asyncio.create_subprocess_exec(
            *self.args,
            cwd=self.cwd,
            env=self.env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        self._reader = asyncio.create_task(self._read())
        await self.wait_for(lambda lines: any("Server is ready" in line for line in lines), "Server is ready")
        return self

    async def _read(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while raw := await self._process.stderr.readline():
            self.lines.append(raw.decode("utf-8", "backslashreplace").rstrip("\n"))
            self._news.set()
        self._news.set()

    async def wait_for(self, done: Callable[[list[str]], object], what: str, timeout: float = WAIT) -> None:
        """Read until ``done(lines)`` holds (the process ending or the deadline fails the test)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not done(self.lines):
            assert self._reader is not None
            if self._reader.done():
                raise AssertionError(f"[{self.kind}] ended before {what}:\n" + "\n".join(self.lines))
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"[{self.kind}] no {what} within {timeout}s:\n" + "\n".join(self.lines))
            self._news.clear()
            try:
                await asyncio.wait_for(self._news.wait(), left)
            except TimeoutError:
                pass

    async def wait_for_text(self, text: str, count: int = 1) -> None:
        await self.wait_for(lambda lines: sum(text in line for line in lines) >= count, repr(text))

    @property
    def port(self) -> int:
        for line in self.lines:
            found = re.search(r"Listening for client connections on [\d.]+:(\d+)", line)
            if found:
                return int(found.group(1))
        raise AssertionError("no listen line")

    async def stop(self) -> list[str]:
        """SIGTERM, then every line up to the exit."""
        assert self._process is not None and self._reader is not None
        if self._process.returncode is None:
            self._process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self._process.wait(), WAIT)
        finally:
            if self._process.returncode is None:
                self._process.kill()
                await self._process.wait()
        await self._reader
        return self.lines

    async def kill(self) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.kill()
            await self._process.wait()
        if self._reader is not None:
            await self._reader


class Pair:
    """fakejs and nats-server, started the same way, each in its own directory."""

    def __init__(self, tmp_path: Path, args: Sequence[str], env: Callable[[Path], dict[str, str]] | None = None):
        self.tmp_path = tmp_path
        self.args = list(args)
        self.env = env
        self.fake: Logged | None = None
        self.real: Logged | None = None

    def directory(self, kind: str) -> Path:
        return self.tmp_path / kind

    def _arguments(self, kind: str) -> list[str]:
        return [arg.replace("{dir}", str(self.directory(kind))) for arg in self.args]

    async def start(self) -> tuple[Logged, Logged]:
        processes = []
        for kind in ("real", "fake"):
            directory = self.directory(kind)
            env = self.env(directory) if self.env is not None else None
            processes.append(Logged(kind, self._arguments(kind), directory, env))
        self.real, self.fake = await asyncio.gather(*(process.start() for process in processes))
        return self.fake, self.real

    async def stop(self) -> tuple[list[str], list[str]]:
        assert self.fake is not None and self.real is not None
        fake, real = await asyncio.gather(self.fake.stop(), self.real.stop())
        return fake, real

    async def kill(self) -> None:
        for process in (self.fake, self.real):
            if process is not None:
                await process.kill()


@pytest.fixture
async def pairs(tmp_path: Path):
    started: list[Pair] = []

    def make(args: Sequence[str], env: Callable[[Path], dict[str, str]] | None = None, name: str = "") -> Pair:
        pair = Pair(tmp_path / name if name else tmp_path, args, env)
        started.append(pair)
        return pair

    yield make
    for pair in started:
        await pair.kill()


def between(lines: Sequence[str], first: str, last: str) -> list[str]:
    """The lines from the one containing ``first`` to the one containing ``last``, both included."""
    start = next(i for i, line in enumerate(lines) if first in line)
    end = next(i for i, line in enumerate(lines) if i >= start and last in line)
    return list(lines[start : end + 1])


def assert_same(fake: Sequence[str], real: Sequence[str]) -> None:
    assert list(fake) == list(real), "fakejs (left) and nats-server (right) differ:\n" + "\n".join(
        f"{'  ' if f == r else '!='} {f!r:<100} | {r!r}" for f, r in zip_longest(fake, real, fillvalue="")
    )


# -- the JetStream banner ---------------------------------------------------------------------------------


@pytest.mark.parametrize("flags", [[], ["-D"]], ids=["info", "debug"])
async def test_jetstream_start_and_shutdown_lines_match(pairs, flags: list[str]) -> None:
    pair = pairs(["-a", "127.0.0.1", "-p", "-1", "-js", "-sd", "{dir}/store", *flags])
    await pair.start()
    fake_lines, real_lines = await pair.stop()
    assert_same(compared(fake_lines), compared(real_lines))
    started = between(compared(fake_lines), "Starting JetStream", "Server is ready")
    assert "[INF]   API Level:       5" in started
    assert started[started.index("[INF] ---------------- JETSTREAM ----------------") - 1] == "[INF] "


async def test_recovered_streams_and_consumers_are_logged_alike(pairs) -> None:
    """One stream: nats-server restores several at once, their lines interleaved."""
    pair = pairs(["-a", "127.0.0.1", "-p", "-1", "-js", "-sd", "{dir}/store", "-D"])
    fake, real = await pair.start()
    for server in (fake, real):
        nc = await nats.connect(f"nats://127.0.0.1:{server.port}")
        js = nc.jetstream()
        await js.add_stream(name="ORDERS", subjects=["orders.>"])
        for n in range(1200):
            await js.publish("orders.new", b"%d" % n)
        for durable in ("audit", "billing"):
            await js.add_consumer("ORDERS", durable_name=durable)
        await nc.close()
    await pair.stop()
    fake, real = await pair.start()
    fake_lines, real_lines = await pair.stop()
    recovered = between(compared(fake_lines), "Recovering JetStream state", "recovered")
    assert recovered == [
        '[DBG] Recovering JetStream state for account "$G"',
        "[INF]   Starting restore for stream '$G > ORDERS'",
        "[INF]   Restored 1,200 messages for stream '$G > ORDERS' in <duration>",
        "[INF]   Recovering 2 consumers for stream - '$G > ORDERS'",
        '[DBG] JetStream state for account "$G" recovered',
    ]
    assert_same(compared(fake_lines), compared(real_lines))
    # Three internal clients for the stream, two for each consumer; nats-server may exit before the last have logged.
    assert internal_closes(fake_lines) == 7 and 1 <= internal_closes(real_lines) <= 7


CONFIGURED = """
port: -1
host: 127.0.0.1
jetstream {
  store_dir: "store"
  domain: hub
  max_mem: 1G
  max_file: 10G
}
"""


async def test_a_configured_jetstream_block_is_logged_alike(pairs) -> None:
    pair = pairs(["-c", "nats.conf", "-D"])
    for kind in ("fake", "real"):
        pair.directory(kind).mkdir()
        (pair.directory(kind) / "nats.conf").write_text(CONFIGURED)
    await pair.start()
    fake_lines, real_lines = await pair.stop()
    assert_same(compared(fake_lines), compared(real_lines))
    lines = compared(fake_lines)
    assert any(re.fullmatch(r"\[INF\] Using configuration file: nats\.conf \(sha256:[0-9a-f]{64}\)", x) for x in lines)
    assert "[INF]   Max Memory:      953.67 MB" in lines
    assert "[INF]   Max Storage:     <disk>" in lines
    assert "[INF]   Domain:          hub" in lines
    assert not any("dynamic configuration" in line for line in lines)  # both limits were given


# -- a store without -sd ---------------------------------------------------------------------------------


def temporary_dir(directory: Path) -> dict[str, str]:
    """Each process's temporary directory is its own (nats-server puts its store in $TMPDIR/nats/jetstream)."""
    tmp = directory / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return {"TMPDIR": str(tmp)}


@pytest.mark.parametrize("source", ["flag", "config"])
async def test_without_a_store_dir_both_warn_and_fakejs_names_its_temporary_store(pairs, source: str) -> None:
    if source == "flag":
        pair = pairs(["-a", "127.0.0.1", "-p", "-1", "-js", "-D"], env=temporary_dir)
    else:
        pair = pairs(["-a", "127.0.0.1", "-p", "-1", "-c", "{dir}/nats.conf", "-D"], env=temporary_dir)
        for kind in ("fake", "real"):
            pair.directory(kind).mkdir()
            (pair.directory(kind) / "nats.conf").write_text("jetstream {}\n")
    fake, real = await pair.start()
    store = re.search(r'Store Directory: "(.*)"', "\n".join(fake.lines))
    assert store is not None
    assert store.group(1).startswith(str(pair.directory("fake") / "tmp" / "fakejs-store-"))
    assert os.path.isdir(store.group(1))
    assert f'Store Directory: "{pair.directory("real")}/tmp/nats/jetstream"' in "\n".join(real.lines)
    fake_lines, real_lines = await pair.stop()
    assert_same(
        compared(fake_lines, lambda x: "Using configuration file" not in x),
        compared(real_lines, lambda x: "Using configuration file" not in x),
    )
    warning = "[WRN] Temporary storage directory used, data could be lost on system reboot"
    assert warning in compared(fake_lines)
    assert normalise(next(line for line in fake_lines if "temporary store" in line)) == (
        f'[INF] fakejs: temporary store directory "{store.group(1)}" is removed at exit'
    )
    assert not os.path.exists(store.group(1))


# -- protocol traces ---------------------------------------------------------------------------------------


async def converse(port: int, *steps: bytes, until: Sequence[tuple[bytes, int]] = (), hang_up: bool = True) -> bytes:
    """Send each step on a raw connection; after it, read until ``until``'s entry came back (that many times).

    Then hang up, or (``hang_up=False``) read until the server does.
    """
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    received = await asyncio.wait_for(reader.readline(), WAIT)  # INFO
    for step, (awaited, count) in zip_longest(steps, until[: len(steps)], fillvalue=(b"", 0)):
        writer.write(step)
        await writer.drain()
        mark = len(received)
        while received[mark:].count(awaited) < count:
            chunk = await asyncio.wait_for(reader.read(65536), WAIT)
            if not chunk:
                break
            received += chunk
    while not hang_up and (chunk := await asyncio.wait_for(reader.read(65536), WAIT)):
        received += chunk
    writer.close()
    await writer.wait_closed()
    return received


TRACED = (
    b'CONNECT {"verbose":true,"pedantic":true,"user":"u","pass":"secret","lang":"raw","version":"1.0",'
    b'"headers":true,"protocol":1,"name":"tracer"}\r\n'
    b"PING\r\n"
    b"SUB a.*  9\r\n"
    b"SUB b 10\r\n"
    b"SUB _INBOX.>  12\r\n"
    b"PUB a.*  2\r\nhi\r\n"
    b'PUB a.x reply.x 5\r\n"q"\x00\xff\r\n'
    b"HPUB a.h 20 25\r\nNATS/1.0\r\nKey: v\r\n\r\nhello\r\n"
    b"UNSUB 10 1\r\n"
    b"SUB s.\xff 13\r\n"  # a subject byte that is not UTF-8: written as \xff
    b"PUB s.\xff 1\r\n!\r\n"
    b"UNSUB 13\r\n"  # on close nats-server drops what is left in no set order: one subscription only
    b"PUB b 0\r\n\r\n"
    b"UNSUB 9 \r\n"
    b"PING\r\n",
    # nats-server answers $JS.API requests from another goroutine: a PING sent with one overtakes the reply.
    b"PUB $JS.API.STREAM.CREATE.X _INBOX.1 4\r\n{bad\r\n",
)


def client_lines(line: str) -> bool:
    """A client's lines, and the warnings and errors (not nats-server's system account traffic, -VV)."""
    return " - cid:" in line or "[WRN]" in line or "[ERR]" in line


@pytest.mark.parametrize(
    "flags,config",
    [
        (["-V"], ""),
        (["-DV"], ""),
        (["-VV"], ""),
        (["-DVV"], ""),
        (["-V", "--max_traced_msg_len", "4"], ""),
        ([], "trace: true"),
        ([], "trace_verbose: true"),
        ([], "debug: true\ntrace_headers: true"),
        ([], "trace: true\nmax_traced_msg_len: 3"),
    ],
    ids=["V", "DV", "VV", "DVV", "max-len-flag", "trace", "trace_verbose", "trace_headers", "max-len-config"],
)
async def test_trace_lines_match(pairs, flags: list[str], config: str) -> None:
    args = ["-a", "127.0.0.1", "-p", "-1", "-js", "-sd", "{dir}/store", "--user", "u", "--pass", "secret", *flags]
    if config:
        args += ["-c", "{dir}/nats.conf"]
    pair = pairs(args)
    for kind in ("fake", "real"):
        pair.directory(kind).mkdir()
        (pair.directory(kind) / "nats.conf").write_text(config + "\n")
    fake, real = await pair.start()
    until = ((b"PONG\r\n", 2), (b"MSG _INBOX.1 ", 1))
    replies = await asyncio.gather(*(converse(server.port, *TRACED, until=until) for server in (fake, real)))
    assert replies[0].count(b"\r\nMSG ") + replies[0].count(b"\r\nHMSG ") == 6, replies[0]
    for server in (fake, real):
        await server.wait_for_text("<-> [DELSUB 12]")
    fake_lines, real_lines = await pair.stop()
    assert_same(compared(fake_lines, client_lines), compared(real_lines, client_lines))
    traced = "\n".join(compared(fake_lines, client_lines))
    assert '<<- [CONNECT {"verbose":true,"pedantic":true,"user":"u","pass":"[REDACTED]",' in traced
    assert '"v1.0:raw:tracer" - "$G/user:u" - <<- [SUB a.*  9]' in traced


async def test_a_nats_py_client_is_traced_alike(pairs) -> None:
    pair = pairs(["-a", "127.0.0.1", "-p", "-1", "-DV"])
    fake, real = await pair.start()
    for server in (fake, real):
        nc = await nats.connect(f"nats://127.0.0.1:{server.port}", name="app", inbox_prefix=b"_INBOX.app")
        sub = await nc.subscribe("greet.*")
        await nc.publish("greet.joe", b"hello", headers={"K": "v"})
        await sub.next_msg(timeout=WAIT)
        await sub.unsubscribe(limit=2)
        await nc.publish("greet.ann", b"")
        await nc.publish("greet.bob", b"bye")
        await nc.flush()
        await nc.close()
        await server.wait_for_text("Client connection closed")
    fake_lines, real_lines = await pair.stop()
    assert_same(compared(fake_lines, client_lines), compared(real_lines, client_lines))
    assert any(line.endswith('"v2.16.0:python3:app" - <<- [SUB greet.*  1]') for line in compared(fake_lines))


# -- warnings and errors ---------------------------------------------------------------------------------


async def test_invalid_jetstream_requests_are_warned_of_once_a_second(pairs) -> None:
    pair = pairs(["-a", "127.0.0.1", "-p", "-1", "-js", "-sd", "{dir}/store"])
    fake, real = await pair.start()
    steps = (
        b"CONNECT {}\r\nSUB _INBOX.>  1\r\n",
        b"PUB $JS.API.STREAM.CREATE.X _INBOX.1 4\r\n{bad\r\n",
        b"PUB $JS.API.STREAM.CREATE.X _INBOX.2 4\r\n{bad\r\n",  # the same warning: not repeated
        b'PUB $JS.API.STREAM.CREATE.Y _INBOX.3 22\r\n{"name":"Y","color":1}\r\n',
        b"PUB $JS.API.CONSUMER.CREATE.Y _INBOX.4 2\r\n[]\r\n",
    )
    # One request at a time: nats-server answers them from several goroutines.
    until = [(b"", 0)] + [(b"MSG _INBOX.%d " % n, 1) for n in range(1, 5)]
    await asyncio.gather(*(converse(server.port, *steps, until=until) for server in (fake, real)))
    fake_lines, real_lines = await pair.stop()
    warnings = compared(fake_lines, lambda line: "[WRN]" in line)
    assert_same(warnings, compared(real_lines, lambda line: "[WRN]" in line))
    assert warnings == [
        "[WRN] Invalid JetStream request '$G > $JS.API.STREAM.CREATE.X': "
        "invalid character 'b' looking for beginning of object key string at offset 2",
        """[WRN] Invalid JetStream request '$G > $JS.API.STREAM.CREATE.Y': json: unknown field "color\"""",
        "[WRN] Invalid JetStream request '$G > $JS.API.CONSUMER.CREATE.Y': "
        "json: cannot unmarshal array into Go value of type server.CreateConsumerRequest",
    ]


BROKEN_CLIENTS = (
    b'CONNECT {"lang":"raw","version":"1"}\r\nPUB foo 1048577\r\n',
    b'CONNECT {"lang":"raw"}\r\nFOO\r\n',
    b'CONNECT {"lang":"raw"}\r\nPUX\r\n',
    b'CONNECT {"lang":"raw"}\r\nSUBX\r\n',
    b'CONNECT {"lang":"raw"}\r\nPUB foo\r\n',
    b'CONNECT {"lang":"raw"}\r\nPUB foo x\r\n',
    b'CONNECT {"lang":"raw","headers":true}\r\nHPUB foo 5 2\r\n',
    b'CONNECT {"lang":"raw","headers":true}\r\nHPUB foo a 2\r\n',
    b'CONNECT {"lang":"raw"}\r\nHPUB foo 1 2\r\n',
    b'CONNECT {"lang":"raw"}\r\nSUB x\r\n',
    b'CONNECT {"lang":"raw"}\r\nUNSUB 1 2 3\r\n',
    b"CONNECT {bad\r\n",
    b'CONNECT {"lang":"raw"}\r\nINFO {"x":\r\n',
    b'CONNECT {"lang":"raw"}\r\nPUB x 2\r\nabc\r\n',
    b'CONNECT {"lang":"raw"}\r\nPUB x 2\r\nab\rc\r\n',
    b'CONNECT {"lang":"raw"}\r\n-ERR \'boom\'\r\n',
    b"SUB " + b"x" * 5000 + b" 1\r\n",
    b'CONNECT {"lang":"raw","protocol":5}\r\n',
    b'CONNECT {"lang":"raw","no_responders":true}\r\n',
)


async def test_error_lines_of_broken_clients_match(pairs) -> None:
    pair = pairs(["-a", "127.0.0.1", "-p", "-1", "-DV"])
    fake, real = await pair.start()
    for n, script in enumerate(BROKEN_CLIENTS, start=1):
        for server in (fake, real):
            await converse(server.port, script, hang_up=False)
            await server.wait_for_text("Client connection closed", count=n)
            await server.wait_for_text("[ERR]", count=n)
    fake_lines, real_lines = await pair.stop()
    errors = compared(fake_lines, lambda line: "[ERR]" in line)
    assert_same(compared(fake_lines, client_lines), compared(real_lines, client_lines))
    assert errors[:4] == [
        '[ERR] 127.0.0.1:<port> - cid:<n> - "v1:raw" - maximum payload exceeded: 1048577 vs 1048576',
        """[ERR] 127.0.0.1:<port> - cid:<n> - "raw" - Client parser ERROR, state=0, i=24: proto='"FOO\\r"...'""",
        """[ERR] 127.0.0.1:<port> - cid:<n> - "raw" - Client parser ERROR, state=30, i=26: proto='"X\\r"...'""",
        """[ERR] 127.0.0.1:<port> - cid:<n> - "raw" - Client parser ERROR, state=45, i=27: proto='"X\\r"...'""",
    ]


async def test_authentication_errors_name_the_credential_alike(pairs) -> None:
    pair = pairs(["-a", "127.0.0.1", "-p", "-1", "-D", "--user", "u", "--pass", "p"])
    fake, real = await pair.start()
    scripts = (
        b'CONNECT {"user":"u","pass":"bad","lang":"raw"}\r\nPING\r\n',
        b'CONNECT {"lang":"raw"}\r\nPING\r\n',
        b'CONNECT {"auth_token":"t","lang":"raw"}\r\nPING\r\n',
        b"PING\r\n",
    )
    for n, script in enumerate(scripts, start=1):
        for server in (fake, real):
            await converse(server.port, script, hang_up=False)
            await server.wait_for_text("Client connection closed", count=n)
    fake_lines, real_lines = await pair.stop()
    assert_same(compared(fake_lines), compared(real_lines))
    errors = compared(fake_lines, lambda line: "[ERR]" in line)
    assert errors[:3] == [
        '[ERR] 127.0.0.1:<port> - cid:<n> - authentication error - User "u"',
        "[ERR] 127.0.0.1:<port> - cid:<n> - authentication error",
        '[ERR] 127.0.0.1:<port> - cid:<n> - authentication error - Token "[REDACTED]"',
    ]


async def test_ping_timers_and_stale_clients_are_logged_alike(pairs) -> None:
    pair = pairs(["-a", "127.0.0.1", "-p", "-1", "-DV", "-c", "{dir}/nats.conf"])
    for kind in ("fake", "real"):
        pair.directory(kind).mkdir()
        (pair.directory(kind) / "nats.conf").write_text('ping_interval: "1s"\nping_max: 1\n')
    fake, real = await pair.start()
    # A client that never answers a PING: one timer sends it, the next finds it outstanding.
    script = b'CONNECT {"lang":"raw","verbose":false}\r\nPING\r\n'
    await asyncio.gather(*(converse(server.port, script, hang_up=False) for server in (fake, real)))
    fake_lines, real_lines = await pair.stop()
    assert_same(compared(fake_lines, client_lines), compared(real_lines, client_lines))
    assert compared(fake_lines, client_lines)[-5:] == [
        '[DBG] 127.0.0.1:<port> - cid:<n> - "raw" - Client Ping Timer',
        '[TRC] 127.0.0.1:<port> - cid:<n> - "raw" - ->> [PING]',
        '[DBG] 127.0.0.1:<port> - cid:<n> - "raw" - Client Ping Timer',
        '[DBG] 127.0.0.1:<port> - cid:<n> - "raw" - Stale Client Connection - Closing',
        '[DBG] 127.0.0.1:<port> - cid:<n> - "raw" - Client connection closed: Stale Connection',
    ]


# -- fakejs's own lines ----------------------------------------------------------------------------------

# The loop a command-line server runs on without --loop: uvloop where it is installed.
DEFAULT_LOOP = "asyncio" if loop_factory(AUTO) is None else "uvloop"


@pytest.mark.fake_only
@pytest.mark.parametrize(
    "args,expected",
    [
        (
            ["-p", "-1"],
            [
                "[INF] fakejs: clock: real",
                f"[INF] fakejs: event loop: {DEFAULT_LOOP}",
                "[INF] fakejs: seed: none (random choices differ from run to run; --seed N repeats them)",
                "[INF] fakejs: control API: subjects $FAKEJS.> (no credentials required)",
            ],
        ),
        (
            ["-p", "-1", "-m", "-1", "--clock", "manual", "--autojump", "0.05", "--seed", "7", "--control_token", "x"],
            [
                "[INF] fakejs: clock: manual, autojump after 0.05s of idle real time",
                f"[INF] fakejs: event loop: {DEFAULT_LOOP}",
                "[INF] fakejs: seed: 7",
                "[INF] fakejs: control API: subjects $FAKEJS.> and http://127.0.0.1:<port>/fakejs/ "
                "(the control token required)",
            ],
        ),
        (
            ["-p", "-1", "--user", "u", "--pass", "p", "--clock", "manual", "--loop", "asyncio"],
            [
                "[INF] fakejs: clock: manual (moves only when told)",
                "[INF] fakejs: event loop: asyncio",
                "[INF] fakejs: seed: none (random choices differ from run to run; --seed N repeats them)",
                "[INF] fakejs: control API: subjects $FAKEJS.> (the clients' credentials required)",
            ],
        ),
        (
            ["-p", "-1", "-js", "-sd", "store", "--no_control", "--scenario", "disconnect"],
            [
                "[INF] fakejs: clock: real",
                f"[INF] fakejs: event loop: {DEFAULT_LOOP}",
                "[INF] fakejs: seed: none (random choices differ from run to run; --seed N repeats them)",
                "[INF] fakejs: control API: off",
                "[INF] fakejs: scenario: disconnect (1 faults)",
            ],
        ),
    ],
    ids=["defaults", "manual-seeded-guarded", "credentials", "no-control-scenario"],
)
async def test_fakejs_states_its_own_facts_after_server_is_ready(tmp_path: Path, args, expected) -> None:
    server = await Logged("fake", args, tmp_path).start()
    if any("scenario" in arg for arg in args):
        await server.wait_for_text("fakejs: scenario")
    lines = await server.stop()
    ready = next(i for i, line in enumerate(lines) if "Server is ready" in line)
    assert [normalise(line) for line in lines if own(line)] == expected
    assert all(i > ready for i, line in enumerate(lines) if own(line))


# -- unit checks -----------------------------------------------------------------------------------------


@pytest.mark.fake_only
@pytest.mark.parametrize(
    "count,text",
    [(-1, "-1 B"), (0, "0 B"), (1023, "1023 B"), (1024, "1.00 KB"), (10**9, "953.67 MB"), (1024**3, "1.00 GB")],
)
def test_sizes_are_written_as_nats_server_writes_them(count: int, text: str) -> None:
    assert friendly_bytes(count) == text


@pytest.mark.fake_only
def test_secrets_are_redacted_from_traced_connects() -> None:
    arg = b'{"user":"u","pass":"p w","auth_token":"t","nkey":"UABC","sig":"xyz","name":"password"}'
    assert redact_connect(arg) == (
        b'{"user":"u","pass":"[REDACTED]","auth_token":"[REDACTED]","nkey":"[REDACTED]",'
        b'"sig":"[REDACTED]","name":"password"}'
    )


@pytest.mark.fake_only
def test_client_labels() -> None:
    assert client_label({"version": "1.0", "lang": "go", "name": "app"}, "$G") == ' - "v1.0:go:app"'
    assert client_label({"name": "app"}, "$G") == ' - "app"'
    assert client_label({"user": "u", "lang": "raw"}, "A") == ' - "raw" - "A/user:u"'
    assert client_label({"auth_token": "t"}, "$G") == ' - "$G/token"'
    assert client_label({}, "$G") == ""
