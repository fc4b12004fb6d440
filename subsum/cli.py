"""The `subsum` command line (click + rich).

    subsum verify [--profile ci|thorough] [--json FILE] [--claim ID]...
    subsum claims [--json]
    subsum prove [--json] [--negative]
    subsum match --subscriptions F --events F [--engine model] [--output F]
    subsum check-filter "price > 8.30 and symbol prefix \\"OT\\""

Exit codes: 0 success, 1 a claim or proof failed, 2 bad input or usage.
"""

from __future__ import annotations

import json
import sys
import time

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from subsum.core.filters import FilterError, format_filter, parse_filter
from subsum.core.jsonio import InputError, match_result_lines, read_events, read_subscriptions, write_lines_atomically

out = Console()
err = Console(stderr=True)


def _fail_input(message: str) -> None:
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="subsum")
def main() -> None:
    """subsum: content-based publish/subscribe with every claim checked.

    The spec (spec/), the reference model (subsum.model) and the
    implementation (subsum.impl) are tied together by z3 proofs and
    Hypothesis checks. Start with `subsum verify` and `subsum claims`.
    """


@main.command()
@click.option("--profile", type=click.Choice(["ci", "thorough"]), default="ci", show_default=True,
              help="Hypothesis profile: ci is derandomized and quick; thorough draws many more random examples.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, writable=True), help="Also write the results as JSON to FILE.")
@click.option("--claim", "claim_ids", multiple=True, metavar="ID", help="Run only this claim (repeatable).")
def verify(profile: str, json_path: str | None, claim_ids: tuple[str, ...]) -> None:
    """Run every registered claim's checks and print claim -> kind -> status -> time."""
    from subsum.conformance import profiles

    profiles.load(profile)
    from subsum.conformance.claims import CLAIMS, claim_by_id, run_check

    try:
        claims = [claim_by_id(c) for c in claim_ids] if claim_ids else list(CLAIMS)
    except KeyError as exc:
        _fail_input(f"unknown claim {exc.args[0]!r}; `subsum claims` lists them")
    total = sum(len(c.checks) for c in claims)
    results = []
    start = time.perf_counter()
    with err.status("") as status:
        for claim in claims:
            for check in claim.checks:
                status.update(f"[{len(results) + 1}/{total}] {claim.id}: {check.name}")
                results.append(run_check(claim, check))
    table = Table(title=f"subsum verify (profile {profile})")
    for column in ("claim", "kind", "check", "status", "time (s)"):
        table.add_column(column, justify="right" if column == "time (s)" else "left")
    for r in results:
        mark = "[green]pass[/]" if r.status == "pass" else "[bold red]FAIL[/]"
        check = r.check + (f" ({r.detail})" if r.status == "pass" and r.detail else "")
        table.add_row(escape(r.claim), r.kind, escape(check), mark, f"{r.seconds:.2f}")
    out.print(table)
    failed = [r for r in results if r.status != "pass"]
    for r in failed:
        err.print(f"[bold red]{escape(r.claim)} failed[/] ({escape(r.check)}):\n{escape(r.detail)}", highlight=False)
    elapsed = time.perf_counter() - start
    out.print(f"{len(results) - len(failed)} passed, {len(failed)} failed ({len(claims)} claims, {elapsed:.1f} s)")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as handle:
            json.dump({"profile": profile, "results": [r.to_json() for r in results]}, handle, indent=2)
    sys.exit(1 if failed else 0)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the matrix as JSON.")
def claims(as_json: bool) -> None:
    """Print the traceability matrix: claim -> spec section -> model -> impl -> checks."""
    from subsum.conformance.claims import CLAIMS

    if as_json:
        rows = [
            {"id": c.id, "statement": c.statement, "source": c.source, "spec": c.spec, "model": list(c.model),
             "impl": list(c.impl), "checks": [{"kind": k.kind, "name": k.name} for k in c.checks]}
            for c in CLAIMS
        ]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(title="subsum claims: traceability", show_lines=True)
    for column in ("claim", "spec", "model", "impl", "checks"):
        table.add_column(column, overflow="fold")
    for c in CLAIMS:
        table.add_row(
            f"{escape(c.id)}\n[dim]{escape(c.statement)}[/]",
            escape(c.spec),
            escape("\n".join(c.model)),
            escape("\n".join(c.impl)) or "[dim]none yet[/]",
            escape("\n".join(f"{k.kind}: {k.name}" for k in c.checks)),
        )
    out.print(table)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per proof.")
@click.option("--negative", is_flag=True, help="Also try the deliberately wrong rules (expected: refuted).")
def prove(as_json: bool, negative: bool) -> None:
    """Run the z3 proofs of every covering rule alone."""
    from subsum.conformance.proofs import WRONG_RULES, prove_rule
    from subsum.model.rules import RULES

    rules = list(RULES) + (list(WRONG_RULES) if negative else [])
    results = []
    with err.status("") as status:
        for i, rule in enumerate(rules, start=1):
            status.update(f"[{i}/{len(rules)}] {rule.key}")
            results.append(prove_rule(rule))
    wrong = {r.key for r in WRONG_RULES}
    bad = [r for r in results if (r.status != "refuted" if r.id in wrong else r.status != "proved")]
    if as_json:
        click.echo(json.dumps([r.to_json() for r in results], indent=2, ensure_ascii=False))
    else:
        table = Table(title="subsum prove")
        for column in ("proof", "statement", "source", "status", "time (s)"):
            table.add_column(column, overflow="fold")
        for r in results:
            colour = "green" if r not in bad else "bold red"
            status_text = r.status + (f" {r.counterexample}" if r.counterexample else "")
            table.add_row(escape(r.id), escape(r.statement), escape(r.source), f"[{colour}]{escape(status_text)}[/]", f"{r.seconds:.3f}")
        out.print(table)
        out.print(f"{sum(r.status == 'proved' for r in results)} proved, {sum(r.status == 'refuted' for r in results)} refuted, "
                  f"{sum(r.status == 'unknown' for r in results)} unknown")
    sys.exit(1 if bad else 0)


@main.command()
@click.option("--subscriptions", "subs_path", required=True, type=click.Path(), help="JSONL file of subscriptions.")
@click.option("--events", "events_path", required=True, type=click.Path(), help="JSONL file of events.")
@click.option("--engine", type=click.Choice(["model"]), default="model", show_default=True,
              help="Matching engine. The optimized engines arrive with the matching-engines issue.")
@click.option("--output", "output_path", type=click.Path(dir_okay=False), help="Write results here (default: standard output).")
def match(subs_path: str, events_path: str, engine: str, output_path: str | None) -> None:
    """Match events against subscriptions: one result line per event."""
    from subsum.model.semantics import matching_ids

    try:
        subscriptions = read_subscriptions(subs_path)
        events = read_events(events_path)
    except InputError as exc:
        _fail_input(str(exc))
    pairs = [(s.id, s.subscription) for s in subscriptions]
    lines = list(match_result_lines((e.id, matching_ids(pairs, e.event)) for e in events))
    if output_path:
        write_lines_atomically(output_path, lines)
        err.print(f"{len(events)} events x {len(subscriptions)} subscriptions -> {output_path}")
    else:
        for line in lines:
            click.echo(line)


@main.command("check-filter")
@click.argument("text")
def check_filter(text: str) -> None:
    """Parse a filter and print its normal form, or explain the error."""
    try:
        subscription = parse_filter(text)
    except FilterError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        err.print("  " + text, highlight=False, markup=False)
        err.print("  " + " " * (exc.column - 1) + "^", highlight=False, markup=False)
        sys.exit(2)
    click.echo(format_filter(subscription))
