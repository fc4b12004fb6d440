"""The registry, the spec index and the layering agree."""

import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from subsum.conformance.claims import CLAIMS, KINDS, Claim

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "scripts" / "gen_claims.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_claims", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


gen = load_generator()
REGISTRY = {c.id: c.spec.partition("#")[0] for c in CLAIMS}


def spec_files() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in sorted(ROOT.glob(gen.SPEC_GLOB))}


def spec_index_ids() -> set[str]:
    text = (ROOT / "spec" / "README.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| (CLM-[A-Z0-9-]+) \|", text, flags=re.M))


def test_spec_index_lists_exactly_the_registered_claims():
    assert spec_index_ids() == {c.id for c in CLAIMS}


def test_every_claim_is_stated_once_in_its_spec_section():
    # parse_spec raises, naming file, line and claim, on a claim stated twice,
    # unregistered, unstated, or stated outside the file the registry names.
    statements = gen.parse_spec(spec_files(), REGISTRY)
    assert {c.id: statements[c.id].path for c in CLAIMS} == REGISTRY


def test_generated_statements_and_index_are_current():
    # The generator's own --check: conformance/statements.json and the claim
    # index of spec/README.md must equal what the spec sections give now.
    result = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_statements_are_the_spec_text():
    statements = gen.parse_spec(spec_files(), REGISTRY)
    stale = [c.id for c in CLAIMS if c.statement != statements[c.id].text]
    assert stale == [], f"stale in conformance/statements.json: {stale}; run {gen.COMMAND}"


def test_the_registry_holds_no_statement_text():
    assert "statement" not in attrs.fields_dict(Claim)
    for module in sorted((ROOT / "conformance" / "claims").glob("*.py")):
        source = module.read_text(encoding="utf-8")
        for claim in CLAIMS:
            assert claim.statement[:40] not in source, f"{claim.id}'s statement is written in conformance/claims/{module.name}"


# The parser on made-up spec files.

def test_parser_handles_paragraphs_lists_and_indented_text():
    files = {"spec/01-a.md": "\n".join([
        "Intro naming CLM-A-1 and `**CLM-A-9.**` in code is not a statement.",
        "",
        "**CLM-A-1.** First   sentence,",
        "  wrapped. Check: property.",
        "",
        "**CLM-A-2.** Holds:",
        "- (i) one;",
        "  - (ii) two.",
        "Check: example.",
        "**CLM-A-3.** Right after, without a blank line.",
        "",
        "- **CLM-A-4.** In a list,",
        "  continued.",
        "- **CLM-A-5.** The next item.",
        "  1. nested, part of A-5",
        "- an item that is not a claim",
        "## Heading",
        "**CLM-A-6.** Last.",
        "# Next",
        "```",
        "**CLM-A-7.** in a fence: not a statement",
        "```",
    ])}
    registry = {f"CLM-A-{n}": "spec/01-a.md" for n in range(1, 7)}
    got = {k: s.text for k, s in gen.parse_spec(files, registry).items()}
    assert got == {
        "CLM-A-1": "First sentence, wrapped. Check: property.",
        "CLM-A-2": "Holds: - (i) one; - (ii) two. Check: example.",
        "CLM-A-3": "Right after, without a blank line.",
        "CLM-A-4": "In a list, continued.",
        "CLM-A-5": "The next item. 1. nested, part of A-5",
        "CLM-A-6": "Last.",
    }
    assert gen.parse_spec(files, registry)["CLM-A-3"].line == 10


@pytest.mark.parametrize("files,registry,messages", [
    ({"spec/01-a.md": "**CLM-A-1.** One.\n\n**CLM-A-1.** Again.\n"}, {"CLM-A-1": "spec/01-a.md"},
     ["spec/01-a.md:3: CLM-A-1 is stated twice (first at spec/01-a.md:1)"]),
    ({"spec/01-a.md": "**CLM-A-1.** One.\n", "spec/02-b.md": "\n**CLM-A-1.** Again.\n"}, {"CLM-A-1": "spec/01-a.md"},
     ["spec/02-b.md:2: CLM-A-1 is stated twice (first at spec/01-a.md:1)"]),
    ({"spec/01-a.md": "**CLM-A-1.** One.\n\n**CLM-A-2.** Two.\n"}, {"CLM-A-1": "spec/01-a.md"},
     ["spec/01-a.md:3: CLM-A-2 is stated but not registered"]),
    ({"spec/01-a.md": "**CLM-A-1.** One.\n"}, {"CLM-A-1": "spec/01-a.md", "CLM-B-1": "spec/02-b.md"},
     ["spec/02-b.md: CLM-B-1 is registered in conformance/claims/ but has no `**CLM-B-1.**` statement"]),
    ({"spec/01-a.md": "**CLM-A-1.** One.\n"}, {"CLM-A-1": "spec/02-b.md"},
     ["spec/01-a.md:1: CLM-A-1 is stated here, but conformance/claims/ gives its spec section as spec/02-b.md"]),
    ({"spec/01-a.md": "**CLM-A-1.** One, as\n**CLM-A-2** says.\n\nSee **CLM-A-1.** too.\n"}, {"CLM-A-1": "spec/01-a.md"},
     ["spec/01-a.md:2: **CLM-A-2** inside the statement of CLM-A-1", "spec/01-a.md:4: **CLM-A-1.** is not at the start"]),
    ({"spec/01-a.md": "**CLM-A-1.**\n"}, {"CLM-A-1": "spec/01-a.md"}, ["spec/01-a.md:1: CLM-A-1 has an empty statement"]),
])
def test_parser_fails_loudly_naming_file_and_claim(files, registry, messages):
    with pytest.raises(gen.SpecError) as failure:
        gen.parse_spec(files, registry)
    for message in messages:
        assert message in str(failure.value)


@pytest.mark.parametrize("text,first", [
    ("One. Two.", "One."),
    ("*Title.* The claim holds. Check: property.", "*Title.* The claim holds."),
    ("Rows as Fig. 4-4 and Figs. 4-10, 4-11 (e.g. Example 4-2) hold. Check: example.",
     "Rows as Fig. 4-4 and Figs. 4-10, 4-11 (e.g. Example 4-2) hold."),
    ("Prices 8.40 and 8.20 (seed 001 §5.1(13)). t1 follows.", "Prices 8.40 and 8.20 (seed 001 §5.1(13))."),
    ("No full stop", "No full stop"),
])
def test_the_index_shows_the_first_sentence(text, first):
    assert gen.first_sentence(text) == first


def test_check_names_the_stale_claims():
    module = (ROOT / gen.MODULE).read_text(encoding="utf-8")
    changed = module.replace("Invalid values cannot be built", "Invalid values can be built", 1)
    summary = "\n".join(gen.stale_summary(gen.MODULE, changed, module))
    assert "changed: CLM-DATA-1" in summary and '-  "CLM-DATA-1": "Invalid values can be built' in summary
    readme = (ROOT / gen.INDEX).read_text(encoding="utf-8")
    without = "\n".join(line for line in readme.splitlines() if not line.startswith("| CLM-NET-4 |"))
    assert "missing: CLM-NET-4" in "\n".join(gen.stale_summary(gen.INDEX, without, readme))


def test_every_claim_has_a_check_of_a_known_kind():
    for claim in CLAIMS:
        assert claim.checks, claim.id
        assert all(check.kind in KINDS for check in claim.checks)


def test_claim_ids_are_unique():
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids))


def resolve(dotted: str):
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_traceability_names_resolve():
    for claim in CLAIMS:
        for name in claim.model + claim.impl:
            assert resolve(name) is not None, name


def public_model_names_citing_no_spec_id() -> list[str]:
    """Every public function and class of every model module whose docstring cites no DEF ID."""
    import pkgutil

    import subsum.model

    missing = []
    for info in pkgutil.walk_packages(subsum.model.__path__, "subsum.model."):
        module = importlib.import_module(info.name)
        for name, fn in vars(module).items():
            if callable(fn) and getattr(fn, "__module__", "") == module.__name__ and not name.startswith("_"):
                if not re.search(r"DEF-[A-Z]+-\d", fn.__doc__ or ""):
                    missing.append(f"{module.__name__}.{name}")
    return missing


def test_model_functions_cite_spec_ids(monkeypatch):
    """Every public name of every model module cites the definition it implements (issue 57: 24 did not)."""
    import subsum.model.smt as smt

    assert public_model_names_citing_no_spec_id() == []
    monkeypatch.setattr(smt.check, "__doc__", "Check a formula.")  # planted: a docstring that cites nothing
    assert public_model_names_citing_no_spec_id() == ["subsum.model.smt.check"]


def test_impl_never_imports_model():
    offenders = [
        str(p) for p in (ROOT / "impl").rglob("*.py")
        if re.search(r"^\s*(from|import)\s+subsum\.model", p.read_text(encoding="utf-8"), flags=re.M)
    ]
    assert offenders == []


def test_model_never_imports_impl_or_conformance():
    offenders = [
        str(p) for p in (ROOT / "model").rglob("*.py")
        if re.search(r"^\s*(from|import)\s+subsum\.(impl|conformance)", p.read_text(encoding="utf-8"), flags=re.M)
    ]
    assert offenders == []


def test_no_top_level_model_or_impl_is_installed(tmp_path):
    # Run from an empty folder so the repository itself is not on sys.path.
    code = "import importlib.util as u; print(u.find_spec('model'), u.find_spec('impl'), u.find_spec('subsum.model') is not None)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["None", "None", "True"]
