"""How summaries are written down: subscription IDs (CLM-SUM-9) and the
JSON file and binary wire formats (CLM-SUM-16)."""

from __future__ import annotations

import json
import math

from hypothesis import strategies as st

from subsum.conformance import strategies as gen
from subsum.conformance.checks.matching.properties import property_check
from subsum.conformance.checks.summaries.views import build_owner
from subsum.impl.summary import IdLayout, summary_file, wire
from subsum.impl.summary.file_reader import SummaryFileError

# --- CLM-SUM-9: IDs ---------------------------------------------------------------------------


@property_check(st.integers(1, 2000), st.integers(1, 10**6), st.integers(0, 64), st.data())
def ids_round_trip(brokers, max_subscriptions, attributes, data):
    """CLM-SUM-9: decode(encode(c1, c2, c3)) = (c1, c2, c3); the widths are
    ⌈log2 brokers⌉, ⌈log2 max subscriptions⌉ and nt; popcount(c3) counts the
    attributes; the ID fits in its bits."""
    layout = IdLayout(brokers, max_subscriptions, attributes)
    assert layout.c1_bits == math.ceil(math.log2(brokers)) if brokers > 1 else layout.c1_bits == 0
    assert 2 ** layout.c1_bits >= brokers and (brokers == 1 or 2 ** (layout.c1_bits - 1) < brokers)
    assert 2 ** layout.c2_bits >= max_subscriptions and (max_subscriptions == 1 or 2 ** (layout.c2_bits - 1) < max_subscriptions)
    assert layout.c3_bits == attributes
    c1 = data.draw(st.integers(0, brokers - 1))
    c2 = data.draw(st.integers(0, max_subscriptions - 1))
    chosen = data.draw(st.sets(st.integers(0, attributes - 1))) if attributes else set()
    c3 = layout.bitmap(chosen)
    sid = layout.encode(c1, c2, c3)
    assert layout.decode(sid) == (c1, c2, c3)
    assert layout.popcount(sid) == len(chosen)
    assert layout.broker_of(sid) == c1
    assert sid < 2 ** max(layout.bits, 1)


# --- CLM-SUM-16: file and wire formats ----------------------------------------------------------

@property_check(gen.summary_workloads(max_events=0), st.sampled_from(["none", "contains"]), st.integers(0, 2))
def summary_formats_round_trip(workload, virtual, broker):
    """CLM-SUM-16: JSON and binary round trips keep every row and ID set;
    a file with a row out of canonical form is rejected."""
    subscriptions, _ = workload
    summary = build_owner(subscriptions, broker=broker, brokers=3, virtual=virtual).export()
    doc = json.loads(json.dumps(summary_file.to_json(summary)))
    for back in (summary_file.from_json(doc), wire.from_bytes(wire.to_bytes(summary))):
        assert back.rows() == summary.rows(), (back.rows(), summary.rows())
        assert back.unconditional == summary.unconditional and back.merged_brokers == summary.merged_brokers
        assert back.virtual == summary.virtual and back.schema == summary.schema
    assert summary_file.from_json(doc).names == summary.names
    for i, entry in enumerate(doc["attributes"]):
        broken = json.loads(json.dumps(doc))
        target = broken["attributes"][i]
        some_id = (target.get("rows") or target.get("ranges") or target.get("equalities"))[0]["ids"][:1]
        if "rows" in target:
            target["rows"].append({"op": "any", "ids": some_id})  # covers every other row
        elif target["equalities"]:
            target["equalities"].append(dict(target["equalities"][0]))  # a repeated value
        else:
            target["ranges"].append({"lo": None, "hi": None, "ids": some_id})  # overlaps every range
        try:
            summary_file.from_json(broken, "broken.json")
        except SummaryFileError as exc:
            assert "broken.json" in str(exc) and "attributes" in str(exc), str(exc)
        else:
            raise AssertionError(f"a non-canonical attribute {target} was accepted")
