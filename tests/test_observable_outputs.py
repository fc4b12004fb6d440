"""The network simulator's observable outputs are those recorded before the
broker-as-actor redesign (issue 52): simulate, fuzz, explore and replay of
every protocol, byte for byte but for timings (scripts/observable_outputs.py).
About 45 s of fresh processes: `make thorough`."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.thorough
def test_every_observable_output_is_as_recorded():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "observable_outputs.py"), "compare",
                           str(ROOT / "tests" / "golden" / "observable-before-actors.json")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert "32 of 32 commands give what was recorded" in done.stdout
