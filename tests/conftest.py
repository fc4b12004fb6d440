import os

from subsum.conformance import profiles

# The `ci` profile is the default under pytest; HYPOTHESIS_PROFILE=thorough selects the other.
profiles.load(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
