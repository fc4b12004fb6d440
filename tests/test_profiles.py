"""conformance/runner/profiles.py: under `ci`, a check's examples depend on its name and its strategies only,
never on its source text or on what else the process has loaded (two ways Hypothesis 6.170 lets them
vary), and `thorough` keeps Hypothesis's own behaviour."""

import importlib
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis.internal.conjecture import providers as _providers
from hypothesis import strategies as st
from sortedcontainers import SortedSet  # type: ignore[import-untyped]

from subsum.conformance.runner import profiles

MAGIC = 987_654_321  # a literal no module of subsum has


def _draws(test_source: str, name: str | None, pin: bool) -> list[int]:
    """The values a @given test defined by `test_source` draws under the active profile."""
    drawn: list[int] = []
    scope = {"given": given, "settings": settings, "st": st, "drawn": drawn}
    exec(test_source, scope)  # noqa: S102 (two tests of one name, different source text)
    test = settings(max_examples=40, database=None)(given(st.integers(0, 10**6))(scope["probe"]))
    (profiles.pinned(test, name=name) if pin else test)()
    return drawn


def test_under_ci_a_test_is_seeded_by_its_name_not_its_source_text():
    profiles.load("ci")
    one = "def probe(x):\n    drawn.append(x)\n"
    other = "def probe(x):\n    # the same test, one comment more\n    drawn.append(x)\n"
    assert _draws(one, "checks.probe", pin=True) == _draws(other, "checks.probe", pin=True)
    assert _draws(one, "checks.probe", pin=True) != _draws(one, "checks.other", pin=True)  # another name, other draws


def _magic_hits() -> int:
    hits: list[int] = []

    # Twenty million values around MAGIC: it is not drawn by chance, and Hypothesis's global pool (2**30, 10**9 and
    # their neighbors) has none of them, so a pool holding MAGIC is the only pool a constant is drawn from.
    @settings(max_examples=400, database=None, derandomize=True)
    @given(st.integers(MAGIC - 10**7, MAGIC + 10**7))
    def probe(x):
        hits.append(x == MAGIC)

    probe()
    return sum(hits)


def test_under_ci_the_modules_loaded_do_not_change_the_draws(tmp_path, monkeypatch):
    # A project module loaded mid-run: Hypothesis adds its literals to the values it draws now and then.
    (tmp_path / "constants_probe_module.py").write_text(f"LIMIT = {MAGIC}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        profiles.load("ci")
        before = _draws("def probe(x):\n    drawn.append(x)\n", "checks.loaded", pin=True)
        importlib.import_module("constants_probe_module")
        assert _draws("def probe(x):\n    drawn.append(x)\n", "checks.loaded", pin=True) == before
        assert _providers._get_local_constants is profiles._no_local_constants
        assert _magic_hits() == 0  # the module's literal is never drawn under ci
        # The planted fault: under `thorough` Hypothesis's own pool is back, and a literal in it is drawn, so the
        # check above can fail. The literal is put in the pool directly: when Hypothesis notices a module loaded
        # mid-run depends on what the worker ran before (it compares len(sys.modules) and module ids, which are
        # reused). Three CI runs failed here because `thorough` itself was derandomized where CI is set (see
        # the test below), not because of this.
        profiles.load("thorough")
        hypothesis_own = _providers._get_local_constants
        assert (hypothesis_own.__module__, hypothesis_own.__name__) == (_providers.__name__, "_get_local_constants")
        monkeypatch.setattr(_providers, "_local_constants", _providers._local_constants | _providers.Constants(integers=SortedSet([MAGIC])))
        _providers.CONSTANTS_CACHE.cache.clear()
        assert MAGIC in hypothesis_own().integers
        assert _magic_hits() > 0
    finally:
        profiles.load("ci")
        sys.modules.pop("constants_probe_module", None)


_PROFILE_SETTINGS = """
import json
from hypothesis import settings
from subsum.conformance.runner import profiles
out = {}
for name in ("thorough", "ci"):
    profiles.load(name)
    out[name] = [settings.default.derandomize, settings.default.database is None]
print(json.dumps(out))
"""


@pytest.mark.parametrize("ci_variable", [None, "true"])
def test_the_profiles_are_the_same_whether_or_not_the_environment_says_ci(ci_variable):
    # Hypothesis loads its own built-in `ci` profile at import where CI is set; ours must not inherit from it
    # (it made `thorough` derandomized and database-less on CI machines only).
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci_variable is not None:
        env["CI"] = ci_variable
    result = subprocess.run([sys.executable, "-c", _PROFILE_SETTINGS], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    # [derandomize, database is None]
    assert json.loads(result.stdout) == {"thorough": [False, False], "ci": [True, True]}
