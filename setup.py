"""Package discovery for the one import namespace `subsum`.

The layers live in top-level folders of the repository (model/, impl/,
conformance/) but are installed only as `subsum.model`, `subsum.impl` and
`subsum.conformance`. pyproject.toml cannot say that: `[tool.setuptools]
package-dir` maps names to folders but adds no package (every subpackage must
still be listed in `packages`), and `[tool.setuptools.packages.find]` names
what it finds after the folder it searched (`impl/matching` becomes a
top-level `matching`), with no prefix. So this file walks each mapped folder
with setuptools' own finder and prefixes what it finds; a new subfolder with
an `__init__.py` is in the wheel without an edit here. Everything else is in
pyproject.toml (tests/test_wheel.py builds the wheel and checks it).
"""

from setuptools import find_packages, setup

# Import name -> folder, relative to this file.
ROOTS = {
    "subsum": "subsum",
    "subsum.model": "model",
    "subsum.impl": "impl",
    "subsum.conformance": "conformance",
}


def discover(roots: dict[str, str]) -> list[str]:
    """Every package under each mapped folder, named under its import name."""
    packages = []
    for name, folder in roots.items():
        packages.append(name)
        packages.extend(f"{name}.{sub}" for sub in find_packages(where=folder))
    return sorted(packages)


if __name__ == "__main__":
    setup(package_dir=ROOTS, packages=discover(ROOTS))
