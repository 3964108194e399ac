"""The shape of the tree: packages listed for the wheel and on the layout page, no import cycles, package
docstrings naming their modules, module sizes.

fakejs is laid out a folder per layer (see docs/contributing/architecture.md);
these checks keep that layout from eroding one convenient import or one long
module at a time, and keep each package's docstring and docs/contributing/layout.md
naming what is there.
Layer order itself is import-linter's job (``lint-imports``, contracts in
pyproject.toml).
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grimp
import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "fakejs"
SCENARIOS = REPO / "scenarios"  # packaged as fakejs.scenarios
MAX_LINES = 600  # a ceiling; modules aim for 500


def package_dirs() -> dict[str, Path]:
    """Every package in the tree, by dotted name: folders under fakejs/ with an __init__.py, and scenarios/."""
    found = {
        ".".join(init.parent.relative_to(REPO).parts): init.parent
        for init in PACKAGE.rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    if (SCENARIOS / "__init__.py").exists():
        found["fakejs.scenarios"] = SCENARIOS
    return found


def modules() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield path


def test_every_package_is_listed_for_the_wheel() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    listed = config["tool"]["setuptools"]["packages"]
    assert sorted(listed) == sorted(set(listed)), "a package is listed twice"
    assert set(listed) == set(package_dirs())


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def test_strongly_connected_finds_cycles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert strongly_connected(graph) == [["a", "b", "c"]]


def test_no_import_cycles_counting_every_import() -> None:
    """Module-level, function-local and ``if TYPE_CHECKING:`` imports all count (grimp sees them all)."""
    graph = grimp.build_graph("fakejs", include_external_packages=False)
    edges = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    assert strongly_connected(edges) == []


def docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


IMPORT_SENTENCE = re.compile(r"\bimport(s|ed)?\b|\bsits on\b", re.IGNORECASE)
CODE_LINE = re.compile(r"^\s*(from \S+ import|import \S+)")


@pytest.mark.parametrize("name", sorted(package_dirs()))
def test_every_package_says_what_it_holds_and_may_import(name: str) -> None:
    folder = package_dirs()[name]
    text = docstring(folder / "__init__.py")
    assert text, f"{name}: no module docstring"
    if not [path for path in folder.glob("*.py") if path.name != "__init__.py"]:
        return  # a data package (the shipped scenarios) imports nothing
    prose = "\n".join(line for line in text.splitlines() if not CODE_LINE.match(line))
    assert IMPORT_SENTENCE.search(prose), f"{name}: the docstring does not say what the package may import"


def package_members(folder: Path) -> list[str]:
    """A package's modules (without ``.py``) and sub-packages, by name."""
    members = [path.stem for path in folder.glob("*.py") if path.name != "__init__.py"]
    members += [path.name for path in folder.iterdir() if (path / "__init__.py").is_file()]
    return sorted(members)


@pytest.mark.parametrize("name", sorted(package_dirs()))
def test_every_package_docstring_names_its_modules(name: str) -> None:
    """Each module and sub-package is named in its package's docstring as a literal (``stream``), with what it holds."""
    init = package_dirs()[name] / "__init__.py"
    text = docstring(init)
    missing = [member for member in package_members(init.parent) if f"``{member}``" not in text]
    names = ", ".join(f"``{member}``" for member in missing)
    assert not missing, f"the docstring of {init.relative_to(REPO)} does not name {names}"


@pytest.mark.parametrize("module", [str(path.relative_to(REPO)) for path in modules()])
def test_no_module_is_too_long(module: str) -> None:
    assert len((REPO / module).read_text().splitlines()) <= MAX_LINES


LAYOUT_PAGE = REPO / "docs" / "contributing" / "layout.md"
CODE_SPAN = re.compile(r"`([^`\n]+)`")
MODULE_NAME = re.compile(r"\w+\.py")


def layout_entries() -> dict[str, list[str]]:
    """The layout page's list items, by the path they start with: the code spans that follow it."""
    entries: dict[str, list[str]] = {}
    item: list[str] = []
    for line in [*LAYOUT_PAGE.read_text().splitlines(), ""]:
        if line.startswith("  ") and item:
            item.append(line)
            continue
        spans = CODE_SPAN.findall(" ".join(item))
        if spans:
            entries[spans[0]] = spans[1:]
        item = [line] if line.startswith("- ") else []
    return entries


def tree_paths() -> set[str]:
    """Every package folder (``fakejs/core/cluster/``, ``scenarios/``) and every top-level file of fakejs/."""
    folders = {str(folder.relative_to(REPO)) + "/" for folder in package_dirs().values() if folder != PACKAGE}
    files = {str(path.relative_to(REPO)) for path in PACKAGE.iterdir() if path.is_file()}
    return folders | files


def test_every_package_and_top_level_module_is_on_the_layout_page() -> None:
    entries = layout_entries()
    missing = sorted(tree_paths() - set(entries))
    assert not missing, f"not described in {LAYOUT_PAGE.relative_to(REPO)}: {missing}"
    gone = sorted(path for path in entries if path.startswith("fakejs/") and not (REPO / path).exists())
    assert not gone, f"{LAYOUT_PAGE.relative_to(REPO)} describes what is not there: {gone}"


def test_the_layout_page_names_every_module_of_every_package() -> None:
    """A package's list item names each of its modules as ``name.py`` (its sub-packages have items of their own)."""
    entries = layout_entries()
    missing = {
        folder: names
        for folder in sorted(tree_paths())
        if folder.endswith("/") and (REPO / folder / "__init__.py").exists()
        if (names := [name for name in module_files(REPO / folder) if name not in entries.get(folder, [])])
    }
    assert not missing, f"{LAYOUT_PAGE.relative_to(REPO)} does not name, in the item of each package: {missing}"


def module_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("*.py") if path.name != "__init__.py")


def test_the_modules_the_layout_page_names_for_a_package_exist() -> None:
    stale = [
        f"{folder}{name}"
        for folder, spans in layout_entries().items()
        if folder.endswith("/") and (REPO / folder / "__init__.py").exists()
        for name in spans
        if MODULE_NAME.fullmatch(name) and not (REPO / folder / name).is_file()
    ]
    assert not stale, f"{LAYOUT_PAGE.relative_to(REPO)} names modules that do not exist: {stale}"


ARCHITECTURE_PAGE = REPO / "docs" / "contributing" / "architecture.md"


def layers_contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    return [contract for contract in config["tool"]["importlinter"]["contracts"] if contract["type"] == "layers"]


def layer_modules(layer: str) -> list[str]:
    """``"a | b"`` or ``"a : b"`` -> ``["a", "b"]``."""
    return [name.strip() for name in re.split(r"[|:]", layer)]


def table_rows(page: Path) -> list[list[list[str]]]:
    """A page's table rows (header rows too), each a list of cells, each the code spans in it."""
    rows = []
    for line in page.read_text().splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
            rows.append([CODE_SPAN.findall(cell) for cell in cells])
    return rows


def test_the_architecture_page_shows_every_layers_contract_in_order() -> None:
    """The page restates pyproject.toml's layers contracts (the truth); it must not drift from them."""
    rows = table_rows(ARCHITECTURE_PAGE)
    package_cells = [row[1] for row in rows if len(row) > 1]
    for contract in layers_contracts():
        layers = [layer_modules(layer) for layer in contract["layers"]]
        containers = contract.get("containers")
        if containers:
            container = containers[0]
        else:
            prefix = ".".join(layers[0][0].split(".")[:-1])
            if prefix == "fakejs":  # the package's own layers: one table row per layer
                position = package_cells.index(layers[0])
                assert package_cells[position : position + len(layers)] == layers, contract["name"]
                continue
            container = prefix
            layers = [[name.removeprefix(prefix + ".") for name in layer] for layer in layers]
        (row,) = [row for row in rows if row[0] == [container]]
        assert row[1] == [name for layer in layers for name in layer], contract["name"]
