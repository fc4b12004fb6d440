"""What the fidelity table says about a row that does not match (spec/13
DEF-FID-4, DEF-FID-9): its explanation, graded, with every number in it
read from the results through a placeholder.

A statement's `explain` names values as `{name}`; `[statement.values]`
says how each is measured (any measure a reading can use), `{ours}` is
the row's own reading and `{readingN}` its N-th other reading. A ranking's
`{name:held}` is "held of total", the points where its order holds. The grade says what the explanation rests on:

- E: a measured reading, named in `evidence` (a reading's label or a
  value's name), that shows the cause;
- D: a derivation from the definitions, written out in the explanation;
- S: a cause in the seed (a lost figure, a self-contradiction, a missing
  formula);
- A: asserted, nothing has run it yet (shown, and counted, so that it is
  never mistaken for one of the others).

>>> render("ours is {ours}, Siena's {held}", {"ours": "89.6", "held": "0.0002"})
"ours is 89.6, Siena's 0.0002"
>>> render("it holds at {ours:held} points", {"ours:held": held_of(("a", "b"), "lower", ({"a": 1, "b": 2}, {"a": 3, "b": 2}))})
'it holds at 1 of 2 points'
>>> quoted_numbers("it holds at 10 of 12 points, 4× faster")
['10 of 12', '4×']
>>> quoted_numbers("12.9× at p = 0.1 (000-5.2.1-d, Fig. 5-2), 31 deltas, 1,204,666 bytes")
['12.9×', '1,204,666']
>>> quoted_numbers("Fig. 5-2, 1,204,666 bytes; Figs 5-2 and 5-3 12.9 hops")
['1,204,666', '12.9']
"""

from __future__ import annotations

import re
from typing import Mapping

from subsum.fidelity import verdict as rule

#: grade -> what it means, in the order the table counts them
GRADES = {"E": "a measured reading", "D": "a derivation", "S": "a cause in the seed", "A": "asserted: nothing ran it yet"}
#: whose a difference is -> what that means (spec/13 DEF-FID-10)
DIFFERENCE_BY = {"seed": "the seed: a lost figure, a self-contradiction, what it does not define",
                 "ours": "our modelling or scope: a choice of ours that another faithful choice could change",
                 "measured": "a faithful run disagrees with the seed, and the explanation shows why"}
PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*(?::held)?)\}")
NOT_MEASURED = "(not measured)"

#: what may hold digits without quoting a result: statement ids, sections, figures, tables, experiments, spec ids,
#: version-like names, and settings written `name = value` (a parameter, not a result)
_REFERENCES = re.compile(
    r"\b\d{3}-[0-9.]+-[a-z]+(?:-[a-z]+)?\b"  # 000-5.2.1-d, 001-4-An-rab
    r"|§\s?[0-9.]+"  # §5.2.1
    r"|\b(?:Figs?|Fig|Exps?|Tables?|Algorithm|Example|Def|Eq|seeds?|Chapter|chapter|ch)\.?\s[0-9]+(?:[.\-–][0-9]+)*"
    r"(?:(?:,\s|\sand\s|\sto\s)[0-9]+(?:[.\-–][0-9]+)+)*"  # Figs 5-2, 5-3 and 5-4
    r"|\b[A-Z]{2,}(?:-[A-Z0-9]+)+\b"  # DEF-SUM-15, CLM-SR-8
    r"|[A-Za-zσμλκΔ_][A-Za-z0-9_σμλκ]*\s?(?:=|≤|≥|<|>)\s?-?[0-9][0-9.,]*(?:\s?(?:-|–|to|and)\s?[0-9][0-9.,]*)?"  # K = 10, N = 5-15
)
_NUMBER = re.compile(r"\d+ of \d+|\d+(?:\.\d+)?×|\d{1,3}(?:,\d{3})+|\d+\.\d+|\d{3,}")


def placeholders(text: str) -> list[str]:
    """The names `text` reads through placeholders, in order, each once (`{name:held}` reads `name`)."""
    return list(dict.fromkeys(name.removesuffix(":held") for name in PLACEHOLDER.findall(text)))


def held_of(order, better: str | None, points) -> str:
    """`{name:held}`: at how many of a ranking's points the order holds, "held of total" (`verdict.holds`)."""
    if not points or better is None:
        return NOT_MEASURED
    return f"{sum(rule.holds(order, better, p) for p in points)} of {len(points)}"


def render(text: str, values: Mapping[str, str]) -> str:
    """`text` with each `{name}` replaced by its value's text (NOT_MEASURED when the results lack it)."""
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), NOT_MEASURED), text)


def quoted_numbers(text: str) -> list[str]:
    """The results `text` quotes by hand: numbers with a decimal point, of three digits or more, or with thousands
    separators, outside references and `name = value` settings (an explanation must read them through placeholders)."""
    return _NUMBER.findall(_REFERENCES.sub(" ", PLACEHOLDER.sub(" ", text)))


def graded(grade: str, evidence: str, text: str) -> str:
    """The explanation as the table shows it: its grade first, and for a measured reading, which one."""
    if not grade:
        return text
    head = f"{grade} ({GRADES[grade]}" + (f": {evidence}" if grade == "E" and evidence else "") + ")"
    return f"{head}: {text}"
