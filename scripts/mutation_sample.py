"""A seeded, uniform sample of each package's mutants, for `make mutate SAMPLE=N`.

Running every mutant of subsum/conformance (about 10,000 lines, most of them
state machines whose mutants run the claims) takes longer than a day on the
2-core machine. A uniform random sample of N mutants a package, seeded, gives
an unbiased estimate of the package's kill rate with a 95% interval
(scripts/mutation_report.py `--sample`); the mutants mutmut reaches first in
a cut full run are not such a sample (it runs the fastest first).

Run in the mutation stage (scripts/mutate.sh does):

    python scripts/mutation_sample.py --generate --size 150 --seed 0 --out sample.txt

`--generate` first has mutmut write every mutant of `only_mutate` (its
`mutants/<path>.meta` files; mutmut 3.8's generation step, nothing run);
then the sample is drawn from those files and written one name a line,
sorted. The same mutants, seed and size give the same sample.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mutation_report import bad_input, package_of  # noqa: E402  (scripts/ is not a package)


def generate_mutants(jobs: int) -> None:
    """mutmut's generation step alone (what `mutmut run` does before its stats run), in the current folder."""
    from mutmut import __main__ as mutmut_main  # the optional `mutation` extra: imported only when asked to generate

    Path("mutants").mkdir(exist_ok=True)
    mutmut_main.set_mutant_under_test("mutant_generation")
    mutmut_main.copy_src_dir()
    mutmut_main.copy_also_copy_files()
    mutmut_main.setup_source_paths()
    mutmut_main.create_mutants(jobs)


def mutants_by_package(mutants: Path) -> dict[str, list[str]]:
    """package -> every mutant name mutmut generated in it, sorted."""
    by_package: dict[str, list[str]] = {}
    for meta in sorted(mutants.rglob("*.py.meta")):
        module = str(meta.relative_to(mutants))[: -len(".meta")]
        try:
            names = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        except (OSError, ValueError, KeyError) as exc:
            bad_input(f"{meta}: not a mutmut result file: {exc}")
        if names:  # a module with nothing to mutate (an empty __init__.py) is no package's
            by_package.setdefault(package_of(module), []).extend(names)
    return {package: sorted(names) for package, names in by_package.items()}


def draw_sample(by_package: dict[str, list[str]], size: int, seed: int) -> list[str]:
    """`size` mutants of each package (all of a smaller one), drawn uniformly without replacement.

    Each package has its own generator, seeded by the seed and the package's name, so adding
    a package (or mutants to another package) does not change this one's sample.

    >>> draw_sample({"subsum/model": ["a", "b", "c"], "subsum/impl/caching": ["d"]}, 2, 0) == \\
    ...     sorted(random.Random("0:subsum/model").sample(["a", "b", "c"], 2) + ["d"])
    True
    """
    sample: list[str] = []
    for package, names in sorted(by_package.items()):
        sample += random.Random(f"{seed}:{package}").sample(names, min(size, len(names)))
    return sorted(sample)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, required=True, help="mutants drawn from each package")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="the sample, one mutant name a line")
    parser.add_argument("--mutants", type=Path, default=Path("mutants"), help="mutmut's results folder")
    parser.add_argument("--generate", action="store_true", help="have mutmut generate the mutants first (in the stage)")
    parser.add_argument("--jobs", type=int, default=2, help="processes for the generation")
    args = parser.parse_args()
    if args.size < 1:
        bad_input(f"--size: expected a positive count, got {args.size}")
    if not args.out.parent.is_dir():
        bad_input(f"--out {args.out}: no folder {args.out.parent}")
    if args.generate:
        generate_mutants(args.jobs)
    if not args.mutants.is_dir():
        bad_input(f"{args.mutants}: no mutmut results (generate the mutants first: --generate in the stage)")
    by_package = mutants_by_package(args.mutants)
    sample = draw_sample(by_package, args.size, args.seed)
    args.out.write_text("".join(f"{name}\n" for name in sample), encoding="utf-8")
    for package, names in sorted(by_package.items()):
        print(f"{package}: {min(args.size, len(names))} of {len(names)} mutants")


if __name__ == "__main__":
    main()
