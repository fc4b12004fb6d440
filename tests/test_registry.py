"""The registry, the spec index and the layering agree."""

import importlib
import re
import subprocess
import sys
from pathlib import Path

from subsum.conformance.claims import CLAIMS, KINDS

ROOT = Path(__file__).resolve().parents[1]


def spec_index_ids() -> set[str]:
    text = (ROOT / "spec" / "README.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\| (CLM-[A-Z0-9-]+) \|", text, flags=re.M))


def test_spec_index_lists_exactly_the_registered_claims():
    assert spec_index_ids() == {c.id for c in CLAIMS}


def test_every_claim_is_stated_in_its_spec_section():
    for claim in CLAIMS:
        path, _, _anchor = claim.spec.partition("#")
        text = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"\*\*{re.escape(claim.id)}\.?\*\*", text), f"{claim.id} is not stated in {path}"


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


def test_model_functions_cite_spec_ids():
    import subsum.model.covering as covering
    import subsum.model.semantics as semantics
    import subsum.model.network as network
    import subsum.model.summaries as summaries

    for module in (semantics, covering, summaries, network):
        for name, fn in vars(module).items():
            if callable(fn) and getattr(fn, "__module__", "") == module.__name__ and not name.startswith("_"):
                assert re.search(r"DEF-[A-Z]+-\d", fn.__doc__ or ""), f"{module.__name__}.{name} cites no spec ID"


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
