"""What the documentation names in the code exists: paths, dotted names, and the names in path lists.

Three kinds of inline code (``backticks``, outside fenced blocks) in README.md and docs/ are checked:

- a repository path (``fakejs/core/router.py``, ``tests/harness/``, ``benchmarks/bench_core.py``,
  ``scenarios/``, ``.ci/run``) must exist;
- a dotted name under ``fakejs`` (``fakejs.core.hooks.HOOK_POINTS``, ``fakejs.Server``) must import
  and resolve;
- a list item that begins with a Python file's path is a path list: every name written in backticks
  after the path (``ClientSession.data_received``, ``parse_request``) must be defined in that file, at
  its top level or, as ``Class.member``, in the class (a method, a class attribute or a ``self.``
  attribute); file names (``pyproject.toml``) are not names.

Placeholders (``<stream>``, ``*``, ``{name}``, ``fakejs/...``) are not paths and are left alone, and neither is what
a run makes in a folder .gitignore names (``benchmarks/results/scale.png``).
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeGuard

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])

FENCED = re.compile(r"^```.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`((?:[^`\n]|\n(?![ \t]*\n))+)`")  # a span may wrap, within a paragraph
REPO_PATH = re.compile(r"(?:fakejs|tests|benchmarks|scenarios|docs|\.ci)/[\w./-]*")
DOTTED = re.compile(r"fakejs(?:\.\w+)+")
IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?:\(\))?")
FILE_NAME = re.compile(r".*\.(?:py|toml|md|json|ya?ml|m?js|txt|log|conf|pem|html|lock)")
ITEM_START = re.compile(r"^\s*(?:[-*]|\d+\.)\s")
LIST_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s+`([^`]+\.py)`(.*)$")


def page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


def prose(page: Path) -> str:
    """The page without its fenced code blocks (those are run or shown, see tests/harness/doc_examples.py)."""
    return FENCED.sub("", page.read_text())


def spans(page: Path) -> Iterator[str]:
    for span in CODE_SPAN.findall(prose(page)):
        yield " ".join(span.split())


# -- paths -------------------------------------------------------------------------------------


def generated(path: str) -> bool:
    """Under a folder .gitignore names (``benchmarks/results/``): made by a run, not kept in the repository."""
    ignored = (REPO / ".gitignore").read_text().split()
    return any(path.startswith(folder) for folder in ignored if "/" in folder.rstrip("/"))


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_path_named_exists(page: Path) -> None:
    named = {span for span in spans(page) if REPO_PATH.fullmatch(span) and "..." not in span and not generated(span)}
    missing = sorted(path for path in named if not (REPO / path).exists())
    assert not missing, f"{page_id(page)} names paths that do not exist: {missing}"


# -- dotted names ------------------------------------------------------------------------------


def is_module(dotted: str) -> bool:
    """Whether a dotted name is a module, found without running it (``fakejs.__main__`` runs the server)."""
    try:
        return importlib.util.find_spec(dotted) is not None
    except ImportError:
        return False


def resolves(dotted: str) -> bool:
    """Whether ``fakejs.a.b.Name.member`` imports and resolves (a ``self.`` attribute counts)."""
    if is_module(dotted):
        return True
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for index, name in enumerate(parts[cut:], start=cut):
            owner = value
            try:
                value = getattr(value, name)
            except AttributeError:
                last = index == len(parts) - 1
                return last and isinstance(owner, type) and name in instance_attributes(owner)
        return True
    return False


def instance_attributes(cls: type) -> set[str]:
    """Names a class (or a base of it inside fakejs) annotates or assigns on ``self``."""
    names: set[str] = set()
    for klass in cls.__mro__:
        names.update(getattr(klass, "__annotations__", {}))
        module = getattr(klass, "__module__", "")
        if module.startswith("fakejs"):
            source = Path(importlib.import_module(module).__file__ or "")
            node = definitions(source).get(klass.__qualname__)
            if isinstance(node, ast.ClassDef):
                names.update(class_members(node))
    return names


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_dotted_name_resolves(page: Path) -> None:
    named = {span.removesuffix("()") for span in spans(page)}
    unresolved = sorted(name for name in named if DOTTED.fullmatch(name) and not resolves(name))
    assert not unresolved, f"{page_id(page)} names what does not exist: {unresolved}"


# -- path lists --------------------------------------------------------------------------------


def class_members(node: ast.ClassDef) -> set[str]:
    """Methods, nested classes, class attributes and ``self.`` attributes of a class."""
    members: set[str] = set()
    for statement in node.body:
        members.update(bound_names(statement))
    for inner in ast.walk(node):
        if is_self_attribute(inner):
            members.add(inner.attr)
    return members


def is_self_attribute(node: ast.AST) -> TypeGuard[ast.Attribute]:
    """``self.name`` being assigned."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def bound_names(node: ast.stmt) -> set[str]:
    """What a statement at a module's or a class's top level defines or imports (inside ``if`` and ``try`` too)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Import | ast.ImportFrom):
        return {alias.asname or alias.name.split(".")[0] for alias in node.names}
    if isinstance(node, ast.If | ast.Try):
        blocks = [node.body, node.orelse, *([node.finalbody] if isinstance(node, ast.Try) else [])]
        return {name for block in blocks for statement in block for name in bound_names(statement)}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    names: set[str] = set()
    for target in targets:
        for leaf in ast.walk(target):
            if isinstance(leaf, ast.Name):
                names.add(leaf.id)
    return names


@functools.cache
def definitions(path: Path) -> dict[str, ast.AST]:
    """A module's definitions by qualified name: ``name`` and ``Class.member`` (classes nest)."""
    found: dict[str, ast.AST] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            for name in bound_names(node):
                found[prefix + name] = node
            if isinstance(node, ast.ClassDef):
                for member in class_members(node):
                    found.setdefault(f"{prefix}{node.name}.{member}", node)
                visit(node.body, f"{prefix}{node.name}.")

    visit(ast.parse(path.read_text()).body, "")
    return found


def list_items(page: Path) -> Iterator[str]:
    """The list items of a page, each with its indented continuation lines joined."""
    item: list[str] = []
    for line in [*prose(page).splitlines(), ""]:
        if item and line.startswith((" ", "\t")) and not ITEM_START.match(line):
            item.append(line.strip())
            continue
        if item:
            yield " ".join(item)
        item = [line] if ITEM_START.match(line) else []


def path_lists(page: Path) -> Iterator[tuple[str, list[str]]]:
    """Each path list item of a page: the file and the names that follow it."""
    for text in list_items(page):
        item = LIST_ITEM.match(text)
        if item is not None and REPO_PATH.fullmatch(item.group(1)):
            names = [span.removesuffix("()") for span in CODE_SPAN.findall(item.group(2))]
            yield (
                item.group(1),
                [name for name in names if IDENTIFIER.fullmatch(name) and not FILE_NAME.fullmatch(name)],
            )


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_name_in_a_path_list_is_defined_in_its_file(page: Path) -> None:
    undefined = [
        f"{path}: {name}"
        for path, names in path_lists(page)
        if (REPO / path).is_file()
        for name in names
        if name not in definitions(REPO / path)
    ]
    assert not undefined, f"{page_id(page)} names what its files do not define: {undefined}"


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    assert resolves("fakejs.core.hooks.HOOK_POINTS") and resolves("fakejs.Server")
    assert resolves("fakejs.core.broker.Broker.random")  # assigned on self
    assert not resolves("fakejs.core.hooks.NO_SUCH_NAME") and not resolves("fakejs.no_such_module")
    router = definitions(REPO / "fakejs" / "core" / "router.py")
    assert "Router.publish" in router and "Router.index" in router and "Router.nope" not in router
    page = tmp_path / "page.md"
    page.write_text("- `fakejs/core/router.py`: `Router.publish`, then `$JS.API.>` and `Nope`\n")
    assert list(path_lists(page)) == [("fakejs/core/router.py", ["Router.publish", "Nope"])]
