"""The package's layers import only downwards (static check of every ``import`` in ``certbound/``).

Layers, bottom to top: the numeric kernel (``ball``, ``enclose``), the
lower layers (``checkpoints``, ``bounds``, ``report``; ``models`` above
``checkpoints``), the pipeline, ``audit``, the CLI commands, the CLI. An
import may only go to a strictly lower layer or stay inside its own
sub-package; so nothing outside the CLI imports ``certbound._commands``, the
kernel never imports the pipeline, and the pipeline never imports
``audit``. ``python tests/test_import_graph.py`` prints the graph.
"""

from __future__ import annotations

import ast
import collections
import functools
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "certbound"

#: sub-package (or module) → layer; a module may import only from lower layers (or its own group).
LAYERS = {
    "certbound._version": 0,
    "certbound._errors": 0,
    "certbound._optional": 0,
    "certbound._blas": 0,
    "certbound.ball": 0,
    "certbound.enclose": 1,
    "certbound.checkpoints": 2,
    "certbound.bounds": 2,
    "certbound.report": 2,
    "certbound.models": 3,
    "certbound.testing": 3,
    "certbound.pipeline": 4,
    "certbound.audit": 5,
    "certbound._commands": 6,
    "certbound.cli": 7,
    "certbound.__main__": 8,
    "certbound": 9,  # the curated top-level namespace re-exports from every layer
}


def _group(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def _module_name(path: pathlib.Path) -> tuple[str, str]:
    rel = path.relative_to(PACKAGE.parent).with_suffix("").parts
    package = ".".join(rel[:-1])
    return (package if rel[-1] == "__init__" else ".".join(rel)), package


def _imported(node: ast.AST, package: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        if module == "certbound":  # `from certbound import X`: X is a sub-package or a top-level name
            return [f"certbound.{a.name}" if (PACKAGE / a.name).exists() or (PACKAGE / f"{a.name}.py").exists()
                    else "certbound" for a in node.names]
        return [module]
    return []


@functools.lru_cache(maxsize=1)
def import_graph() -> dict[str, set[str]]:
    """Group → the groups it imports (every import statement, also those inside functions)."""
    edges: dict[str, set[str]] = collections.defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        module, package = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _imported(node, package):
                if target.startswith("certbound") and _group(target) != _group(module):
                    edges[_group(module)].add(_group(target))
    return edges


def test_every_group_has_a_layer():
    groups = set(import_graph()) | {g for targets in import_graph().values() for g in targets}
    assert groups <= set(LAYERS), sorted(groups - set(LAYERS))


def test_no_upward_imports():
    upward = [(a, b) for a, targets in import_graph().items() for b in targets if LAYERS[b] >= LAYERS[a]]
    assert upward == [], upward


def test_only_the_cli_imports_the_commands():
    users = sorted(a for a, targets in import_graph().items() if "certbound._commands" in targets)
    assert users == ["certbound.cli"]


def test_the_kernel_and_lower_layers_do_not_import_the_pipeline():
    for group in ("certbound.ball", "certbound.enclose", "certbound.checkpoints", "certbound.bounds",
                  "certbound.models", "certbound.report"):
        assert "certbound.pipeline" not in import_graph().get(group, set()), group


#: Sub-packages whose modules import no private name from a sibling module either (the rest of the
#: kernel and lower layers still share a few private helpers between sibling modules).
NO_PRIVATE_SIBLING_IMPORTS = ("certbound.pipeline", "certbound._commands", "certbound.cli")


def _is_module(module: str, name: str) -> bool:
    base = PACKAGE.parent / module.replace(".", "/")
    return (base / f"{name}.py").exists() or (base / name / "__init__.py").exists()


def _private_names(tree: ast.AST, module: str, package: str) -> list[tuple[str, str, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = "certbound" if node.module == "certbound" and not node.level else _imported(node, package)[0]
            found += [(module, target, a.name) for a in node.names
                      if target.startswith("certbound") and a.name.startswith("_") and not a.name.startswith("__")
                      and not _is_module(target, a.name)]
    return found


def private_name_imports() -> list[tuple[str, str, str]]:
    """``(importing module, imported module, name)`` for every ``from certbound.… import _name``.

    A private *module* (``from certbound.enclose import _stacked``) is not a private name.
    """
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module, package = _module_name(path)
        found += _private_names(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), module, package)
    return found


def test_no_private_name_is_imported_across_layers():
    across = [f"{a} imports {b}.{n}" for a, b, n in private_name_imports() if _group(a) != _group(b)]
    assert across == []


def test_the_pipeline_and_cli_import_no_private_name_of_another_module():
    inside = [f"{a} imports {b}.{n}" for a, b, n in private_name_imports()
              if _group(a) in NO_PRIVATE_SIBLING_IMPORTS and a != b]
    assert inside == []


def test_the_private_name_check_sees_one():
    tree = ast.parse("from certbound.pipeline._bound import _x, y\nfrom certbound.enclose import _stacked\n"
                     "from ._streaming import _Hidden\nimport certbound.ball\n")
    found = _private_names(tree, "certbound.pipeline._model", "certbound.pipeline")
    assert found == [("certbound.pipeline._model", "certbound.pipeline._bound", "_x"),
                     ("certbound.pipeline._model", "certbound.pipeline._streaming", "_Hidden")]

if __name__ == "__main__":
    graph = import_graph()
    for group in sorted(graph, key=lambda g: (LAYERS.get(g, 99), g)):
        print(f"{group} (layer {LAYERS.get(group)}) -> {', '.join(sorted(graph[group], key=LAYERS.get))}")
