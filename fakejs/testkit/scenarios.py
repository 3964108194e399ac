"""Scripted fault scenarios: TOML files of setup and fault steps.

A scenario names what a test (in any language) needs the server to do to
it, in data rather than code::

    name = "consumer-deleted"
    description = "The consumer is deleted while a pull waits on it."

    [[setup.streams]]                      # $JS.API.STREAM.CREATE bodies
    name = "ORDERS"
    subjects = ["orders.>"]

    [[setup.consumers]]                    # $JS.API.CONSUMER.CREATE bodies
    stream = "ORDERS"
    config = { durable_name = "worker", ack_policy = "explicit" }

    [[steps]]
    on = "pull.request"                    # a hook point (fakejs.testkit.faults.HOOK_POINTS) ...
    match = { consumer = "worker" }
    after = 1                              # ... from its 2nd matching event
    do = "delete_consumer"                 # an action (fakejs.testkit.control.ACTIONS) or event change
    args = { stream = "ORDERS", consumer = "worker" }

    [[steps]]
    at = 5.0                               # or: seconds of server time after the start
    do = "restart"

Files are checked when loaded: an unknown key, hook point or action, a
trigger that cannot work, or ``match`` and ``args`` that do not fit what the
hook point and the action declare (:mod:`fakejs.testkit.arguments`), is
refused with a :class:`ScenarioError` naming the file, line and key.  Shipped scenarios live in ``scenarios/`` at the top of the repository (packaged as ``fakejs.scenarios``)
and are found by name (``consumer-deleted``).

**Cluster scenarios** run on a cluster of servers (``fakejs.Cluster.start_scenario``,
``fakejs --cluster_size N -js --scenario NAME``); see
:mod:`fakejs.server.cluster_scenarios` for how they run.  What makes a scenario one:

* a top-level ``cluster = { size = 3, jetstream = true }`` (the cluster it needs:
  that many nodes, with or without their shared JetStream; ``election =
  5.0``: seconds a consumer or stream whose leader's node crashed stays
  without a leader);
* a step's ``node = "n2"``: a hook-point step then fires only for events
  that node handles, an action runs on that node's server;
* a cluster action as ``do``: ``kill`` / ``shutdown`` (``{node}``),
  ``restart`` with a ``node`` (``{node, down_for}``), ``partition``
  (``{groups = [["n1"], ["n2", "n3"]]}``), ``heal``, ``step_down``
  (``{stream, consumer?}``), ``move_leader`` (``{stream, node, consumer?}``).

A single server refuses such a scenario, naming what needs a cluster.

A request over the network (``$FAKEJS.SCENARIO.START``, ``POST
/fakejs/scenario/start``) names a scenario with :func:`find_named`: a
shipped one, or a ``.toml`` file directly inside a directory the operator
configured (``--scenario_dir``) - never a path, so the control API can
neither read nor probe other files.  The Python API and the CLI's
``--scenario``, both in the operator's hands, take paths (:func:`load_scenario`).
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from typing import Any, Protocol

from fakejs.testkit.arguments import ACTION_NAMES, fault_arguments, fault_match
from fakejs.testkit.faults import CLUSTER_ACTION_NAMES, Fault, FaultError, Faults, validate
from fakejs.testkit.scenario_conformance import (
    ConformancePlan,
    ConformanceTableError,
    conformance_plan,
    default_subject,
)
from fakejs.testkit.schema import SchemaError, check

SHIPPED = str(resources.files("fakejs.scenarios"))
MAX_SCENARIO_BYTES = 1 << 20  # a scenario file a request names is read up to this size
# A file name a request may give: no directory part, no dot-dot, no leading dot.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}")
TOP_KEYS = frozenset({"name", "description", "clock", "cluster", "setup", "steps", "conformance"})
# Shipped scenarios for ``fakejs conformance run``, found as ``conformance/NAME``.
CONFORMANCE_DIR = "conformance"
CLUSTER_KEYS = frozenset({"size", "jetstream", "election"})
SETUP_KEYS = frozenset({"streams", "consumers"})
STEP_KEYS = frozenset({"on", "at", "match", "after", "times", "delay", "do", "args", "name", "node"})
# Cluster actions whose ``node`` argument names a node (it defaults to the step's ``node``).
NODE_ARG_ACTIONS = frozenset({"kill", "shutdown", "restart", "move_leader"})


class ScenarioError(ValueError):
    """A scenario file that cannot be run, with where the problem is."""


class ScenarioHost(Protocol):
    """What starting a scenario needs (the controller): JetStream requests and the faults."""

    @property
    def faults(self) -> Faults: ...

    def api(self, subject: str, body: Any = None) -> dict[str, Any]:
        """Make a ``$JS.API`` request from inside the server; the decoded reply."""
        ...


@dataclass
class Scenario:
    """One scenario file (TOML): the streams and consumers it sets up, the faults it injects as steps,
    the cluster it needs and how a client under test consumes."""

    name: str
    description: str = ""
    clock: str = ""
    streams: list[dict[str, Any]] = field(default_factory=list)
    consumers: list[dict[str, Any]] = field(default_factory=list)
    steps: list[Fault] = field(default_factory=list)
    source: str = ""
    cluster: dict[str, Any] = field(default_factory=dict)  # the cluster it needs ({} : any server)
    nodes: list[str] = field(default_factory=list)  # each step's ``node`` ("": every node)
    text: str = field(default="", repr=False)  # the TOML, to point at a line in later errors
    # The ``[conformance]`` table: how a client under test consumes (see fakejs.testkit.scenario_conformance).
    conformance: ConformancePlan | None = None

    def start(self, controller: ScenarioHost) -> list[Fault]:
        """Create the setup streams and consumers, then install every step (on a single server)."""
        feature = self.cluster_feature()
        if feature:
            raise ScenarioError(
                f"{self.source}: {feature} needs a cluster: start the scenario on a fakejs.Cluster "
                "(start_scenario) or with fakejs --cluster_size N -js --scenario"
            )
        self.setup(controller.api)
        return [controller.faults.add(self.step_fault(index)) for index in range(len(self.steps))]

    def step_fault(self, index: int) -> Fault:
        """A fresh fault for step ``index``, naming the scenario and the step (the timeline records it firing)."""
        return Fault(**fault_fields(self.steps[index]), scenario=self.name, step=index)

    def cluster_feature(self) -> str:
        """What in this scenario only a cluster can run ("" for none)."""
        if self.cluster:
            return "the 'cluster' table"
        for index, step in enumerate(self.steps):
            if any(self.nodes[index : index + 1]):
                return f"steps[{index}].node"
            if step.do in CLUSTER_ACTION_NAMES and (step.do != "restart" or "node" in step.args):
                return f"the cluster action {step.do!r} (steps[{index}])"
        return ""

    def check_nodes(self, known: list[str]) -> None:
        """Refuse a step naming a node the cluster does not have (in ``node`` or in its ``args``)."""
        locate = _Locator(self.text, self.source)
        for index, step in enumerate(self.steps):
            node = self.nodes[index] if index < len(self.nodes) else ""
            if node and node not in known:
                raise ScenarioError(f"{locate.step(index, 'node')}: unknown node {node!r} (nodes: {', '.join(known)})")
            for named in _named_nodes(step):
                if named not in known:
                    raise ScenarioError(
                        f"{locate.step(index, 'args')}: unknown node {named!r} in args (nodes: {', '.join(known)})"
                    )

    def setup(self, api: Callable[[str, Any], dict[str, Any]]) -> None:
        """Create the setup streams and consumers through ``api`` (a ``$JS.API`` request, its decoded reply)."""
        for subject, body, refused in self.setup_requests():
            refused(api(subject, body))

    def setup_requests(self) -> list[tuple[str, dict[str, Any], Callable[[dict[str, Any]], None]]]:
        """The setup's ``$JS.API`` requests in order: subject, body, and a check of the reply that raises a
        :class:`ScenarioError` for a refusal."""
        requests: list[tuple[str, dict[str, Any], Callable[[dict[str, Any]], None]]] = []
        for config in self.streams:
            what = f"setup stream {config.get('name')!r}"
            requests.append((f"$JS.API.STREAM.CREATE.{config.get('name', '')}", config, partial(self._refused, what)))
        for entry in self.consumers:
            stream = entry.get("stream", "")
            config = dict(entry.get("config", {}))
            name = config.get("durable_name") or config.get("name") or ""
            subject = f"$JS.API.CONSUMER.CREATE.{stream}.{name}" if name else f"$JS.API.CONSUMER.CREATE.{stream}"
            body = {"stream_name": stream, "config": config}
            requests.append((subject, body, partial(self._refused, f"setup consumer {name!r}")))
        return requests

    def _refused(self, what: str, reply: dict[str, Any]) -> None:
        if "error" in reply:
            raise ScenarioError(f"{self.source}: {what}: {reply['error']['description']}")


def _named_nodes(step: Fault) -> list[str]:
    """The node names a cluster action's arguments hold."""
    names: list[str] = []
    if step.do in NODE_ARG_ACTIONS and isinstance(step.args.get("node"), str):
        names.append(step.args["node"])
    if step.do == "partition":
        for group in step.args.get("groups", []):
            names += [str(node) for node in group]
    return names


def fault_fields(step: Fault) -> dict[str, Any]:
    """A step's fault settings, to install a fresh copy of it."""
    return {k: getattr(step, k) for k in ("do", "on", "at", "match", "args", "after", "times", "delay", "name")}


def resolve(name_or_path: str) -> str:
    """A path as given, or a shipped scenario by name (``pin-timeout``)."""
    if os.path.exists(name_or_path):
        return name_or_path
    shipped = os.path.join(SHIPPED, name_or_path if name_or_path.endswith(".toml") else name_or_path + ".toml")
    if os.path.exists(shipped):
        return shipped
    raise ScenarioError(f"no scenario file {name_or_path!r} (shipped: {', '.join(shipped_names())})")


def shipped_names() -> list[str]:
    return sorted(f[:-5] for f in os.listdir(SHIPPED) if f.endswith(".toml"))


def conformance_names() -> list[str]:
    """The shipped conformance scenarios, as ``conformance/NAME``."""
    directory = os.path.join(SHIPPED, CONFORMANCE_DIR)
    found = os.listdir(directory) if os.path.isdir(directory) else []
    return sorted(f"{CONFORMANCE_DIR}/{f[:-5]}" for f in found if f.endswith(".toml"))


def find_named(name: object, directories: Sequence[str]) -> Scenario:
    """The scenario a network request names: ``x.toml`` (or ``x``) in one of ``directories``, else shipped.

    A name that is not a plain file name, a missing file and anything that is
    not a regular file all get the same error, so a caller learns nothing
    about the server's files.
    """
    directories = [*directories, SHIPPED]
    if isinstance(name, str) and name.startswith(CONFORMANCE_DIR + "/"):  # shipped only, one level down
        name, directories = name[len(CONFORMANCE_DIR) + 1 :], [os.path.join(SHIPPED, CONFORMANCE_DIR)]
    if not isinstance(name, str) or not _PLAIN_NAME.fullmatch(name) or ".." in name:
        raise _unknown(name)
    file_name = name if name.endswith(".toml") else name + ".toml"
    for directory in directories:
        data = _read_regular(os.path.join(directory, file_name), MAX_SCENARIO_BYTES)
        if data is None:
            continue
        if len(data) > MAX_SCENARIO_BYTES:
            raise ScenarioError(f"scenario {name!r} is larger than {MAX_SCENARIO_BYTES} bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ScenarioError(f"scenario {name!r} is not UTF-8 text") from None
        return load_scenario_text(text, file_name)
    raise _unknown(name)


def _unknown(name: object) -> ScenarioError:
    shown = repr(name)[:80]
    return ScenarioError(
        f"no scenario named {shown}: give a shipped name ({', '.join(shipped_names())}) "
        "or the file name of a .toml file in a scenario directory (--scenario_dir)"
    )


def _read_regular(path: str, limit: int) -> bytes | None:
    """Up to ``limit + 1`` bytes of a regular file (``None`` for anything else, or nothing there).

    Opened without blocking and checked after opening, so a FIFO or a device
    (``/dev/zero``) behind a name is refused rather than waited on or read forever.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def load_scenario(name_or_path: str) -> Scenario:
    path = resolve(name_or_path)
    with open(path, "rb") as handle:
        text = handle.read().decode("utf-8")
    return load_scenario_text(text, path)


def load_scenario_text(text: str, source: str = "<scenario>") -> Scenario:
    """Parse and check a scenario; every problem names the file, line and key."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{source}: {exc}") from None
    locate = _Locator(text, source)
    for key in doc:
        if key not in TOP_KEYS:
            raise ScenarioError(f"{locate.top(key)}: unknown key {key!r} (allowed: {', '.join(sorted(TOP_KEYS))})")
    setup = doc.get("setup", {})
    if not isinstance(setup, dict):
        raise ScenarioError(f"{locate.top('setup')}: 'setup' must be a table")
    for key in setup:
        if key not in SETUP_KEYS:
            raise ScenarioError(f"{locate.top(key)}: unknown setup key {key!r} (allowed: streams, consumers)")
    scenario = Scenario(
        name=str(doc.get("name") or os.path.splitext(os.path.basename(source))[0]),
        description=str(doc.get("description", "")),
        clock=str(doc.get("clock", "")),
        streams=list(setup.get("streams", [])),
        consumers=list(setup.get("consumers", [])),
        source=source,
    )
    scenario.cluster = _cluster_table(doc.get("cluster", {}), locate)
    scenario.text = text
    if scenario.clock not in ("", "manual", "real"):
        raise ScenarioError(f'{locate.top("clock")}: \'clock\' must be "manual" or "real"')
    steps = doc.get("steps", [])
    if not isinstance(steps, list):
        raise ScenarioError(f"{locate.top('steps')}: use [[steps]] tables")
    scenario.steps = [_step(step, index, locate) for index, step in enumerate(steps)]
    scenario.nodes = [_node(step, index, locate) for index, step in enumerate(steps)]
    if "conformance" in doc:
        try:
            scenario.conformance = conformance_plan(doc["conformance"])
        except ConformanceTableError as exc:
            raise ScenarioError(f"{locate.top('conformance')}: {exc}") from None
        scenario.conformance.subject = scenario.conformance.subject or default_subject(scenario.streams)
    return scenario


# The cluster table's keys: what a value must be, and how an error says it.
_CLUSTER_VALUES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "size": (lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "a number of nodes >= 1"),
    "jetstream": (lambda v: isinstance(v, bool), "true or false"),
    "election": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0, "seconds >= 0"),
}


def _cluster_table(table: object, locate: _Locator) -> dict[str, Any]:
    """The top-level ``cluster = { size = 3, jetstream = true }``, checked."""
    if not isinstance(table, dict):
        raise ScenarioError(f"{locate.top('cluster')}: 'cluster' must be a table like {{ size = 3, jetstream = true }}")
    for key, value in table.items():
        if key not in CLUSTER_KEYS:
            raise ScenarioError(
                f"{locate.top('cluster')}: unknown cluster key {key!r} (allowed: {', '.join(sorted(CLUSTER_KEYS))})"
            )
        if not _CLUSTER_VALUES[key][0](value):
            raise ScenarioError(
                f"{locate.top('cluster')}: cluster {key!r} must be {_CLUSTER_VALUES[key][1]}, not {value!r}"
            )
    return dict(table)


def _node(step: dict[str, Any], index: int, locate: _Locator) -> str:
    node = step.get("node", "")
    if not isinstance(node, str):
        raise ScenarioError(f"{locate.step(index, 'node')}: 'node' must be a node's name (\"n2\"), not {node!r}")
    return node


# Typed step keys: the type they are read as, and how an error names it.
_STEP_TYPES: tuple[tuple[str, type, str], ...] = (
    ("at", float, "a number"),
    ("after", int, "an integer"),
    ("times", int, "an integer"),
    ("delay", float, "a number"),
    ("match", dict, "a table"),
    ("args", dict, "a table"),
)


def _step(step: dict[str, Any], index: int, locate: _Locator) -> Fault:
    """One ``[[steps]]`` table as a checked :class:`Fault`."""
    for key in step:
        if key not in STEP_KEYS:
            raise ScenarioError(
                f"{locate.step(index, key)}: unknown step key {key!r} (allowed: {', '.join(sorted(STEP_KEYS))})"
            )
    if "do" not in step:
        raise ScenarioError(f"{locate.step(index)}: step has no 'do' (the action to run)")
    values: dict[str, Any] = {}
    for key, kind, wanted in _STEP_TYPES:
        if key in step:
            value = step[key]
            if isinstance(value, bool) or not isinstance(value, (int, float) if kind is not dict else dict):
                raise ScenarioError(f"{locate.step(index, key)}: '{key}' must be {wanted}, not {value!r}")
            values[key] = kind(value)
    try:
        times = values.get("times", 1)
        fault = Fault(
            do=str(step["do"]),
            on=step.get("on"),
            at=values.get("at"),
            match=values.get("match", {}),
            args=values.get("args", {}),
            after=values.get("after", 0),
            times=None if times == 0 else times,
            delay=values.get("delay", 0.0),
            name=str(step.get("name", "")),
        )
        validate(fault, ACTION_NAMES | CLUSTER_ACTION_NAMES)
    except (FaultError, TypeError, ValueError) as exc:
        key = _culprit(str(exc))
        raise ScenarioError(f"{locate.step(index, key)}: {exc}") from None
    _check_declared(fault, index, locate)
    return fault


def _check_declared(fault: Fault, index: int, locate: _Locator) -> None:
    """A step's ``match`` and ``args`` read against what its hook point and its ``do`` declare.

    A cluster action's arguments are checked when a cluster starts the
    scenario (:mod:`fakejs.server.cluster_scenarios`).
    """
    if fault.do in CLUSTER_ACTION_NAMES:
        return
    settings = {"on": fault.on, "do": fault.do}
    for key, declared in (("match", fault_match(settings)), ("args", fault_arguments(settings))):
        if declared is None:
            continue
        label = declared.name.rsplit("/", 1)[-1]
        try:
            check(declared, getattr(fault, key), f"{key} ({label})", defaults=False)
        except SchemaError as exc:
            raise ScenarioError(f"{locate.step(index, key)}: {exc}") from None


def _culprit(message: str) -> str:
    """The step key an error message is about (to point at its line)."""
    for pattern, key in (
        ("unknown action", "do"),
        ("cannot match", "match"),
        ("hook point", "on"),
        ("trigger", "on"),
        ("'at'", "at"),
        ("'after'", "after"),
        ("'times'", "times"),
        ("'delay'", "delay"),
    ):
        if pattern in message:
            return key
    return ""


class _Locator:
    """Line numbers for keys: tomllib does not keep them, so look them up in the text."""

    def __init__(self, text: str, source: str) -> None:
        self.lines = text.splitlines()
        self.source = source

    def top(self, key: str) -> str:
        for number, line in enumerate(self.lines, 1):
            if re.match(rf"\s*(\[+\s*(setup\.)?)?{re.escape(key)}\b", line):
                return f"{self.source}:{number}"
        return self.source

    def step(self, index: int, key: str = "") -> str:
        seen = -1
        start = None
        for number, line in enumerate(self.lines, 1):
            if re.match(r"\s*\[\[\s*steps\s*\]\]", line):
                seen += 1
                if seen == index:
                    start = number
                elif seen > index:
                    break
            elif start is not None and key and re.match(rf"\s*{re.escape(key)}\s*=", line):
                return f"{self.source}:{number} (steps[{index}].{key})"
        if start is None:
            return f"{self.source} (steps[{index}])"
        return f"{self.source}:{start} (steps[{index}]{'.' + key if key else ''})"
