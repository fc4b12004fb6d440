"""One direction of dependencies, checked on the import graph.

Every import of every module of the package (at the top or inside a
function) is read with `ast` and its layer checked against an allow-list:

    core         imports nothing of ours but core
    model        core
    impl         core
    conformance  core, model, impl
    app          core, model, impl, conformance (what a command does, below the CLI)
    fidelity     core, model, impl, conformance (the seeds' statements and the one verdict rule)
    bench        core, model, impl, conformance, fidelity (each bench judges its figures by the statements)
    cli          core, impl, conformance, app, fidelity, bench: never the model (the CLI parses and renders)
    (and nothing of ours imports fidelity but bench and the CLI, nor bench or cli but the CLI and `python -m subsum`)

No private name (`_x`) is imported from another module, and no private
attribute of another module or class of ours is read through it
(`module._x`, `Class._x`, `Class.x_`).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: folder -> the package it is installed as (pyproject.toml's package-dir)
ROOTS = {"subsum": "subsum", "model": "subsum.model", "impl": "subsum.impl", "conformance": "subsum.conformance"}

ALLOWED = {
    "core": {"core"},
    "model": {"core", "model"},
    "impl": {"core", "impl"},
    "conformance": {"core", "model", "impl", "conformance"},
    "app": {"core", "model", "impl", "conformance", "app"},
    "fidelity": {"core", "model", "impl", "conformance", "fidelity"},
    "bench": {"core", "model", "impl", "conformance", "fidelity", "bench"},
    "cli": {"core", "impl", "conformance", "app", "bench", "fidelity", "cli"},
    "top": {"cli", "top"},  # subsum/__init__.py, subsum/__main__.py
}


def modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    found = {}
    for folder, package in ROOTS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


@functools.lru_cache(maxsize=None)
def parse_source(text: str, filename: str = "<unknown>") -> ast.Module:
    """The syntax tree of a module's text, parsed once per process (every rule
    here walks every module; the trees are only read)."""
    return ast.parse(text, filename=filename)


def parse(path: Path) -> ast.Module:
    return parse_source(path.read_text(encoding="utf-8"), str(path))


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__main__",):
        return "top"
    return parts[1]


def imports(module: str, path: Path, known: set[str]) -> list[tuple[int, str, str | None]]:
    """(line, imported module, imported name or None) for every import of ours in the file."""
    tree = parse(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names if alias.name.split(".")[0] == "subsum"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "subsum":
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in known:  # `from subsum import model`: a module, not a name
                    found.append((node.lineno, submodule, None))
                else:
                    found.append((node.lineno, source, alias.name))
    return found


def private_reads(path: Path, imported: dict[str, str]) -> list[tuple[int, str]]:
    """`alias._x` or `alias.x_` where alias names a module or class imported from another module of ours."""
    tree = parse(path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in imported:
            attr = node.attr
            if (attr.startswith("_") and not attr.startswith("__")) or attr.endswith("_") and not attr.endswith("__"):
                found.append((node.lineno, f"{node.value.id}.{attr}"))
    return found


def violations() -> list[str]:
    known = modules()
    problems = []
    for module, path in known.items():
        mine = layer(module)
        aliases: dict[str, str] = {}
        for line, source, name in imports(module, path, set(known)):
            where = f"{path.relative_to(ROOT)}:{line}"
            target = layer(source)
            if target not in ALLOWED[mine]:
                problems.append(f"{where}: {mine} imports {target} ({source})")
            if name is not None and name.startswith("_") and source != module:
                problems.append(f"{where}: private name {name} imported from {source}")
        tree = parse(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("subsum"):
                aliases.update({(a.asname or a.name): node.module for a in node.names})
            elif isinstance(node, ast.Import):
                aliases.update({(a.asname or a.name.split(".")[0]): a.name for a in node.names if a.name.startswith("subsum")})
        for line, what in private_reads(path, aliases):
            problems.append(f"{path.relative_to(ROOT)}:{line}: private attribute {what} read from another module")
    return problems


def test_every_module_is_seen():
    known = modules()
    assert {"subsum.core.types", "subsum.model.semantics", "subsum.impl.network.sim", "subsum.conformance.claims"} <= set(known)
    assert all(layer(m) in ALLOWED for m in known), sorted(m for m in known if layer(m) not in ALLOWED)


def test_dependencies_point_one_way():
    assert violations() == []


@pytest.mark.parametrize("planted, expected", [
    ("from subsum.model.semantics import matches\n", "impl imports model"),
    ("from subsum import model\n", "impl imports model"),
    ("import subsum.conformance.claims\n", "impl imports conformance"),
    ("from subsum.core.jsonio import _private_helper\n", "private name _private_helper"),
    ("from subsum.bench import network\n", "impl imports bench"),
    ("from subsum.app import match\n", "impl imports app"),
])
def test_a_planted_bad_import_is_caught(tmp_path, monkeypatch, planted, expected):
    victim = ROOT / "impl" / "network" / "accounting.py"
    text = victim.read_text(encoding="utf-8")
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: (text + "\n" + planted) if self == victim
                        else Path.open(self, encoding="utf-8").read())
    assert any(expected in v for v in violations()), violations()


def test_the_cli_never_imports_the_model(monkeypatch):
    victim = ROOT / "subsum" / "cli" / "match.py"
    text = victim.read_text(encoding="utf-8")
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: (text + "\nfrom subsum.model import semantics\n") if self == victim
                        else Path.open(self, encoding="utf-8").read())
    assert any("cli imports model" in v for v in violations()), violations()
