"""The `subsum` command line (click + rich).

    subsum verify [--profile ci|thorough] [--json FILE] [--claim ID]...
    subsum claims [--json]
    subsum prove [--json] [--negative]
    subsum match --subscriptions F --events F [--engine vectorized|rab|indexed|counting|brute|model] [--output F] [--stats]
    subsum bench matching [--quick] [--out DIR] ...
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


ENGINE_NAMES = ("vectorized", "rab", "indexed", "counting", "brute", "model")


@main.command()
@click.option("--subscriptions", "subs_path", required=True, type=click.Path(), help="JSONL file of subscriptions.")
@click.option("--events", "events_path", required=True, type=click.Path(), help="JSONL file of events.")
@click.option("--engine", type=click.Choice(ENGINE_NAMES), default="vectorized", show_default=True,
              help="Matching engine (spec/03-matching.md). All give the same lines; 'model' is the slow reference.")
@click.option("--output", "output_path", type=click.Path(dir_okay=False), help="Write results here (default: standard output).")
@click.option("--stats", "show_stats", is_flag=True, help="Print the engine's work counters and timings to standard error.")
@click.option("--stats-json", "stats_path", type=click.Path(dir_okay=False), help="Write the counters and timings as JSON.")
def match(subs_path: str, events_path: str, engine: str, output_path: str | None, show_stats: bool, stats_path: str | None) -> None:
    """Match events against subscriptions: one result line per event.

    Each line is {"event": ID, "subscriptions": [IDs, sorted]}, in input order.
    """
    try:
        subscriptions = read_subscriptions(subs_path)
        events = read_events(events_path)
    except InputError as exc:
        _fail_input(str(exc))
    pairs = [(s.id, s.subscription) for s in subscriptions]
    batch = [e.event for e in events]
    from subsum.impl.matching import make_engine
    from subsum.model.semantics import match_batch

    started = time.perf_counter()
    if engine == "model":
        built = time.perf_counter()
        matched = match_batch(pairs, batch)
        counters: dict = {"events": len(batch), "matches": sum(map(len, matched))}
    else:
        matcher = make_engine(engine, pairs)
        matcher.prepare()
        built = time.perf_counter()
        matched = matcher.match_batch(batch)
        counters = matcher.stats.to_json()
    finished = time.perf_counter()
    lines = list(match_result_lines((e.id, sorted(ids)) for e, ids in zip(events, matched)))
    if output_path:
        write_lines_atomically(output_path, lines)
        err.print(f"{len(events)} events x {len(subscriptions)} subscriptions -> {escape(output_path)}")
    else:
        for line in lines:
            click.echo(line)
    stats = {"engine": engine, "subscriptions": len(pairs), "build_seconds": round(built - started, 6),
             "match_seconds": round(finished - built, 6), **counters}
    if stats_path:
        write_lines_atomically(stats_path, [json.dumps(stats, indent=2)])
    if show_stats:
        table = Table(title=f"subsum match --engine {engine}")
        table.add_column("counter")
        table.add_column("value", justify="right")
        for key, value in stats.items():
            table.add_row(escape(key), escape(f"{value:,}" if isinstance(value, int) else str(value)))
        err.print(table)


@main.group()
def bench() -> None:
    """Benchmarks; results (CSV, PNG, summary.json) go under benchmarks/results/."""


def _parse_groups(_ctx, _param, value: str) -> list[int]:
    try:
        groups = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise click.BadParameter(f"expected a comma-separated list of 1..5, got {value!r}") from None
    if not groups or not all(1 <= g <= 5 for g in groups):
        raise click.BadParameter(f"expected a comma-separated list of 1..5, got {value!r}")
    return groups


@bench.command("matching")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="benchmarks/results/matching", show_default=True,
              help="Folder for matching.csv, one PNG per group, scaling.png and summary.json.")
@click.option("--groups", default="1,2,3,4,5", show_default=True, callback=_parse_groups,
              help="Seed 001 experiment groups to run (1 a, 2 E, 3 A_n, 4 c, 5 S).")
@click.option("--quick", is_flag=True, help="Three points per group, a small scaling run, one repeat.")
@click.option("--repeat", type=click.IntRange(1, 100), default=3, show_default=True, help="Timed runs per measurement (mean and min reported).")
@click.option("--planted-rate", type=click.FloatRange(0.0, 1.0), default=0.1, show_default=True,
              help="Share of events built to match a subscription, in the 'planted' variant (the 'literal' variant uses 0).")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the workload generator.")
@click.option("--model-events", type=click.IntRange(0), default=100, show_default=True,
              help="Run the reference model on this many events of the default point (0: skip).")
@click.option("--scaling/--no-scaling", default=True, show_default=True, help="Run the scaling points up to S=E=100,000.")
@click.option("--budget", type=click.FloatRange(1.0), default=120.0, show_default=True,
              help="Skip a scaling measurement projected to take longer than this many seconds.")
def bench_matching(out_dir, groups, quick, repeat, planted_rate, seed, model_events, scaling, budget) -> None:
    """Seed 001's five experiment groups plus a scaling run, every engine and
    DuckDB side by side, cross-checked. Writes CSV, PNG plots and a summary."""
    from pathlib import Path

    from subsum.bench import matching as bm

    out_path = Path(out_dir)
    out_path.mkdir(parents=True, exist_ok=True)
    if quick:
        repeat = 1
    runner = bm.Runner(out_path, repeat, planted_rate, seed, model_events, budget, lambda m: err.print(m, highlight=False))
    chosen = [g for g in bm.GROUPS if g.number in groups]
    started = time.perf_counter()
    bm.run_default_point(runner, bm.ENGINES)
    bm.run_groups(runner, chosen, quick, bm.ENGINES)
    if scaling:
        bm.run_scaling(runner, quick)
    csv_path = runner.write_csv("matching.csv")
    plots = bm.plot_groups(runner.rows, out_path, chosen)
    scaling_plot = bm.plot_scaling(runner.rows, out_path)
    findings = bm.assess(runner.rows, chosen)
    summary = {"seconds": round(time.perf_counter() - started, 1), "repeat": repeat, "planted_rate": planted_rate,
               "seed": seed, "quick": quick, "groups": groups, "findings": findings, "disagreements": runner.disagreements}
    (out_path / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    table = Table(title="seed 001 claims and targets")
    for column in ("claim", "holds", "figures"):
        table.add_column(column, overflow="fold")
    for f in findings:
        table.add_row(escape(f["claim"]), "[green]yes[/]" if f["holds"] else "[red]no[/]", escape(f["detail"]))
    out.print(table)
    written = [csv_path, *plots, *([scaling_plot] if scaling_plot else []), out_path / "summary.json"]
    out.print("wrote " + ", ".join(escape(str(p)) for p in written))
    if runner.disagreements:
        err.print("[bold red]engines disagree:[/] " + escape("; ".join(runner.disagreements)))
        sys.exit(1)


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
