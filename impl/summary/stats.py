"""Sizes and shapes of a summary (spec/04-summaries.md DEF-SUM-15, DEF-SUM-16):
the thesis's size formula (seed 000 §5.1) and the statistics `subsum
summary stats` prints."""

from __future__ import annotations

from subsum.impl.summary import wire
from subsum.impl.summary.normalize import NUMERIC
from subsum.impl.summary.summary import Summary


def formula_size(summary: Summary, s_st: int = 4, s_id: int = 4, s_sv: float = 10) -> dict:
    """DEF-SUM-15: seed 000 §5.1's size formulas, with Table 5-2's sizes by default.

    AACS = Σ over numeric attributes of (2·n_sr + n_e)·s_st + L_a·s_id
    SACS = Σ over string and bool attributes of n_r·s_sv + L_s·s_id
    (the SACS formula is lost to OCR; this is the seed note's reading by
    analogy). L is the total length of the attribute's ID lists."""
    aacs = sacs = 0.0
    for key, rows in summary.rows().items():
        ids = sum(len(r[2]) for r in rows)
        if key[1] in NUMERIC:
            n_sr = sum(1 for r in rows if r[0] == "range")
            n_e = len(rows) - n_sr
            aacs += (2 * n_sr + n_e) * s_st + ids * s_id
        else:
            sacs += len(rows) * s_sv + ids * s_id
    return {"aacs": aacs, "sacs": sacs, "total": aacs + sacs}


def statistics(summary: Summary, json_bytes: int) -> dict:
    """DEF-SUM-15, DEF-SUM-16: rows, ID-list lengths and sizes of a summary, per attribute
    and in all; `json_bytes` is the size of its file."""
    per_key = []
    for key, rows in summary.rows().items():
        lengths = [len(ids) for _, _, ids in rows]
        per_key.append({"attribute": f"{key[0]}:{key[1]}", "ranges": sum(r[0] == "range" for r in rows),
                        "equalities": sum(r[0] == "equality" for r in rows), "rows": len(rows),
                        "ids": sum(lengths), "longest_id_list": max(lengths)})
    entries = sum(k["ids"] for k in per_key)
    rows_total = summary.row_count()
    return {"attributes": per_key, "rows": rows_total, "id_entries": entries,
            "mean_id_list": round(entries / rows_total, 3) if rows_total else 0.0,
            "subscriptions": len(summary.member_ids()), "unconditional": len(summary.unconditional),
            "merged_brokers": sorted(summary.merged_brokers), "id_bits": summary.layout.bits,
            "formula_bytes": formula_size(summary), "measured_bytes": len(wire.to_bytes(summary)), "json_bytes": json_bytes}
