"""Build build/typecheck/: a tree of symlinks shaped like the installed
package, for static tools.

The editable install maps `subsum.model` to model/ (and `subsum.impl`,
`subsum.conformance`) with an import hook that only a running interpreter
sees; mypy cannot run it. This tree spells the mapping out on disk:
build/typecheck/subsum/ links each entry of subsum/ and links model, impl and
conformance to their folders, as setup.py's ROOTS says. pyproject.toml's
mypy_path points at it. Links to folders, so new files need no rebuild; a new
mapped root or a new entry directly under subsum/ does (`make test` rebuilds
it every run).

    .venv/bin/python scripts/link_tree.py [DEST]    # DEST: build/typecheck
"""

import os
import runpy
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def link_tree(dest: Path) -> Path:
    roots = runpy.run_path(str(ROOT / "setup.py"))["ROOTS"]
    if dest.exists():
        shutil.rmtree(dest)
    for name, folder in roots.items():
        target = dest.joinpath(*name.split("."))
        if name == "subsum":
            target.mkdir(parents=True)
            for entry in sorted((ROOT / folder).iterdir()):
                if entry.name != "__pycache__":
                    (target / entry.name).symlink_to(os.path.relpath(entry, target))
        else:
            target.symlink_to(os.path.relpath(ROOT / folder, target.parent), target_is_directory=True)
    return dest


if __name__ == "__main__":
    print(link_tree(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "typecheck"))
