"""No import circle in nbext of more than four files (docs/architecture.md#import-rules).

import-linter has no contract for circles, so this test reads the import statements
itself. Every statement counts, including those under ``TYPE_CHECKING`` and inside
functions: a lazy import still ties two modules' meanings together, and it is the tie
that makes a change expensive, not the moment of loading. A package's ``__init__.py``
that only hands names on (defines no function or class) is a face, not a file of its
own: an import of it stands for imports of the modules it re-exports.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "nbext"
LARGEST_ALLOWED = 4


def module_files() -> dict[str, Path]:
    files = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ours that ``path`` names in any import statement."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            named.add(source)
            named.update(f"{source}.{alias.name}" for alias in node.names)
    found = set()
    for dotted in named:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        if dotted and dotted != name:
            found.add(dotted)
    return found


def is_face(path: Path) -> bool:
    body = ast.parse(path.read_text()).body
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return path.name == "__init__.py" and not any(isinstance(n, definitions) for n in body)


def import_graph() -> dict[str, set[str]]:
    known = module_files()
    edges = {name: imported(name, path, known) for name, path in known.items()}
    faces = {name for name, path in known.items() if is_face(path)}

    def through_faces(targets: set[str], seen: set[str]) -> set[str]:
        out = set()
        for target in targets:
            if target not in faces:
                out.add(target)
            elif target not in seen:
                seen.add(target)
                out |= through_faces(edges[target], seen)
        return out

    return {n: through_faces(t, set()) - {n} for n, t in edges.items() if n not in faces}


def circles(graph: dict[str, set[str]]) -> Iterator[set[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for root in graph:
        if root in order:
            continue
        work = [(root, iter(sorted(graph[root])))]
        order[root] = low[root] = len(order)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next((c for c in children if c in graph), None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == order[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        yield component
            elif child not in order:
                order[child] = low[child] = len(order)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], order[child])


def test_the_reader_finds_a_circle() -> None:
    """The reader sees a known circle, so an empty answer below means something."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert list(circles(graph)) == [{"a", "b", "c"}]


def test_no_import_circle_of_more_than_four_files() -> None:
    graph = import_graph()
    assert len(graph) > 100, "the reader found too few modules to be reading nbext"
    too_large = [sorted(c) for c in circles(graph) if len(c) > LARGEST_ALLOWED]
    assert not too_large, f"import circles of more than {LARGEST_ALLOWED} files: {too_large}"
