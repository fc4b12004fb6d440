"""The docstring examples of `subsum.model` and `subsum.core` (and of the
conformance modules that carry them) run and hold.

Collected here rather than by `pytest --doctest-modules model/`: that imports
model/x.py by its path, as a second copy named `model.x`, a top-level name the
project never installs. Here each module is imported under its real name and
each docstring with examples is one test. Every public function of the model
must carry an example."""

import doctest
import importlib
import inspect
import pkgutil

import pytest

import subsum.core
import subsum.model

MODULES = [importlib.import_module(m.name)
           for package in (subsum.model, subsum.core)
           for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
MODULES += [importlib.import_module(name) for name in (
    "subsum.conformance.runner.budget", "subsum.conformance.runner.census", "subsum.conformance.runner.violations",
    "subsum.conformance.runner.under_test", "subsum.conformance.claims.records",
    "subsum.fidelity.verdict", "subsum.fidelity.measure")]
FINDER = doctest.DocTestFinder(exclude_empty=True)
DOCTESTS = [t for module in MODULES for t in FINDER.find(module) if t.examples]


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples_hold(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_core_errors_examples_are_collected():
    assert any(t.name.startswith("subsum.core.errors") for t in DOCTESTS)


def test_every_public_model_function_has_an_example():
    missing = [f"{module.__name__}.{name}"
               for module in MODULES if module.__name__.startswith("subsum.model.")
               for name, fn in vars(module).items()
               if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_")
               and ">>>" not in (fn.__doc__ or "")]
    assert missing == []
