"""Every code example in README.md and docs/ runs in the suite (collected by Sybil, from conftest.py).

How each fenced block is judged, by its language and the directive in an HTML comment just before it:

- ``python``: executed.  Top-level ``await`` is allowed; a block that awaits runs on an event loop of
  its own, and the blocks of one page share one namespace, in order.
- ``python`` after ``<!-- example: test-file NAME -->``: a pytest test file.  It is written as NAME into
  a new directory holding nothing else (no configuration, no conftest) and run with pytest there, as
  a user who only installed ``fakejs[pytest]`` would run it; every test in it must pass, without a
  warning.
- ``sh``: past the variables a line sets for its command (``NAME=value``), each ``fakejs`` command
  line is read by fakejs's own command-line reader (flags, configuration file, settings), each
  ``fakejs conformance run`` and ``fakejs-parity`` line by its own parser, each ``python FILE`` names
  a file of the repository, and every other line starts with a program from :data:`OTHER_PROGRAMS`.
- ``conf``: read as a nats-server configuration file.
- ``toml`` after ``<!-- example: scenario -->``: loaded as a fault scenario.
- ``text``, ``json`` and the rest: shown, not run (output and wire bytes).

``<!-- skip: next -->`` (Sybil's) skips the next block; it is kept for examples that need what a test
cannot give (fixed ports of a shared machine, a container engine), each with the reason beside it.
"""

from __future__ import annotations

import ast
import asyncio
import itertools
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sybil import Document, Example, Region
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

REPOSITORY = Path(__file__).resolve().parents[2]

# Programs a shell example may start besides fakejs's own, which are not run here: installers, the
# container engine, curl and the nats CLI against a server the reader started, the test command.
OTHER_PROGRAMS = frozenset(
    {
        "pip",
        "npm",
        "ruff",
        "mypy",
        "lint-imports",
        "docker",
        "podman",
        "curl",
        "nats",
        "nats-server",
        "cd",
        "sh",
        "mkdir",
        "chmod",
    }
)

_FENCE_INFO = re.compile(r"(?P<language>[\w+-]*)[^\n]*$\n", re.MULTILINE)
_DIRECTIVE = re.compile(r"<!--\s*example:\s*(?P<words>[^>]*?)\s*-->\s*\Z")


def _directive_before(document: Document, start: int) -> list[str]:
    """The words of an ``<!-- example: ... -->`` comment ending right before a block, if any."""
    before = document.text[max(0, start - 200) : start]
    found = _DIRECTIVE.search(before)
    return found.group("words").split() if found else []


class ExampleParser:
    """Finds the fenced code blocks of a Markdown page and gives each the judge its language calls for."""

    def __init__(self) -> None:
        self.lexer = RawFencedCodeBlockLexer(info_pattern=_FENCE_INFO)

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self.lexer(document):
            language = region.lexemes["language"]
            directive = _directive_before(document, region.start)
            judge = _judge(language, directive)
            if judge is None:
                continue
            region.parsed = region.lexemes["source"]
            region.evaluator = judge
            yield region


def _judge(language: str, directive: list[str]) -> Any:
    if language == "python":
        if directive[:1] == ["test-file"]:
            name = directive[1] if len(directive) > 1 else "test_example.py"
            return lambda example: run_test_file(example, name)
        return run_python
    if language == "sh":
        return check_shell
    if language == "conf":
        return check_configuration
    if language == "toml" and directive[:1] == ["scenario"]:
        return check_scenario
    return None


def run_python(example: Example) -> None:
    """Execute a Python block in the page's namespace; a block that awaits gets its own event loop."""
    source = "\n" * (example.line + example.parsed.line_offset) + str(example.parsed)
    code = compile(source, example.path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    result = eval(code, example.namespace)
    if asyncio.iscoroutine(result):
        asyncio.run(result)
    example.namespace.pop("__builtins__", None)


def run_test_file(example: Example, name: str) -> None:
    """Run a test file as a new project would: alone in a directory, with nothing configured."""
    with tempfile.TemporaryDirectory(prefix="fakejs-example-") as directory:
        Path(directory, name).write_text(str(example.parsed))
        environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
        finished = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name],
            check=False,
            cwd=directory,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
    output = finished.stdout + finished.stderr
    assert finished.returncode == 0, f"{name} from {example.path}:{example.line} failed:\n{output}"
    summary = output.strip().splitlines()[-1]
    assert " passed" in summary and not re.search(r"skipped|warning|error", summary), output


def _command_lines(source: str) -> Iterator[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped, ``&&`` chains split."""
    text = source.replace("\\\n", " ")
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        command: list[str] = []
        for word in words:
            if word in ("&&", "||", ";", "|"):
                if command:
                    yield command
                command = []
            else:
                command.append(word)
        if command:
            yield command


_ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=")  # a variable set for one command: ``FAKEJS_MYPYC=1 pip ...``


def check_shell(example: Example) -> None:
    for line in _command_lines(str(example.parsed)):
        words = list(itertools.dropwhile(_ASSIGNMENT.match, line))
        assert words, f"{example.path}:{example.line}: only assignments in {shlex.join(line)}"
        program = words[0]
        if program == "fakejs":
            _check_fakejs_command(words[1:])
        elif program == "fakejs-parity":
            from fakejs.parity.cli import _parser as parity_parser

            parity_parser().parse_args(words[1:])
        elif program in ("python", "python3") and words[1:2] != ["-m"]:
            assert (REPOSITORY / words[1]).is_file(), f"{example.path}:{example.line}: no file {words[1]}"
        elif program in ("python", "python3"):
            assert words[2] in ("fakejs", "pytest", "venv"), f"{example.path}:{example.line}: {shlex.join(words)}"
            if words[2] == "fakejs":
                _check_fakejs_command(words[3:])
        else:
            assert program in OTHER_PROGRAMS, f"{example.path}:{example.line}: unknown program in {shlex.join(words)}"


def _check_fakejs_command(arguments: list[str]) -> None:
    if arguments[:1] == ["conformance"]:
        from fakejs.cli.conformance import _parser as conformance_parser

        conformance_parser().parse_args(arguments[1:])
        return
    from fakejs.cli import Exit, command_line

    try:
        command_line(arguments)
    except Exit as end:
        assert end.status == 0 and not end.stderr, f"fakejs {shlex.join(arguments)}: {end.stderr or end.stdout}"


def check_configuration(example: Example) -> None:
    from fakejs import options_from_config

    options_from_config(text=str(example.parsed))


def check_scenario(example: Example) -> None:
    """Load a scenario; one that shows a shipped scenario must show it as shipped."""
    from fakejs.testkit.scenarios import load_scenario, load_scenario_text, shipped_names

    scenario = load_scenario_text(str(example.parsed), f"{example.path}:{example.line}")
    if scenario.name in shipped_names():
        shipped = Path(load_scenario(scenario.name).source).read_text()
        assert str(example.parsed) == shipped, f"{example.path}:{example.line} differs from {scenario.name}.toml"
