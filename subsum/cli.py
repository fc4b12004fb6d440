"""The `subsum` command line (click + rich).

    subsum verify [--profile ci|thorough] [--json FILE] [--claim ID]...
    subsum claims [--json]
    subsum prove [--json] [--negative]
    subsum match --subscriptions F --events F [--engine vectorized|rab|indexed|counting|brute|model] [--output F] [--stats]
    subsum bench matching [--quick] [--out DIR] ...
    subsum bench summaries [--quick] [--out DIR] ...
    subsum summary build --subscriptions F [--broker N --brokers B] [--virtual none|contains] [--json OUT]
    subsum summary match --summary F --events F [--subscriptions F] [--output F]
    subsum summary stats --summary F [--json]
    subsum summary merge --out F SUMMARY...
    subsum fuzz reconfig [--protocol strawman|timed|notified|informed] [--topology T|FILE] [--brokers N] [--churn R] [--steps N] [--seed S] [--budget SEC]
    subsum replay FILE
    subsum match --engine spark [--master URL] [--conf K=V]... (JSONL or Parquet in, JSONL or Parquet out)
    subsum trace-check TRACE --grace SECONDS [--window SECONDS] [--out DIR] [--master URL] [--conf K=V]...
    subsum simulate [--protocol P] [--topology T|FILE] [--brokers N] [--subscriptions N] [--events N] [--swaps N] [--trace OUT]
    subsum bench network [--quick] [--out DIR]
    subsum bench reconfig [--quick] [--out DIR]
    subsum bench spark [--quick] [--out DIR] [--max-events N]
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


ENGINE_NAMES = ("vectorized", "rab", "indexed", "counting", "brute", "model", "spark")


def _spark_options(fn):
    """--master and --conf, shared by every command that runs Spark."""
    fn = click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
                      help="A Spark setting, passed through (repeatable), e.g. spark.driver.memory=4g.")(fn)
    return click.option("--master", default=None, metavar="URL",
                        help="Spark master URL (default: $SPARK_MASTER, else local[*]).")(fn)


def _spark_session(master: str | None, spark_conf: tuple[str, ...], progress: bool = False):
    """Start (or reuse) the Spark session, or exit 2 saying what is missing."""
    from subsum.impl.spark.session import SparkUnavailable, get_session, parse_conf

    try:
        return get_session(master, parse_conf(spark_conf), progress=progress)
    except (SparkUnavailable, ValueError) as exc:
        _fail_input(str(exc))


@main.command()
@click.option("--subscriptions", "subs_path", required=True, type=click.Path(),
              help="Subscriptions: JSONL (.parquet with --engine spark).")
@click.option("--events", "events_path", required=True, type=click.Path(),
              help="Events: JSONL (.parquet with --engine spark).")
@click.option("--engine", type=click.Choice(ENGINE_NAMES), default="vectorized", show_default=True,
              help="Matching engine (spec/03-matching.md, spec/07-pipeline.md). All give the same lines; "
                   "'model' is the slow reference; 'spark' runs on PySpark.")
@click.option("--output", "output_path", type=click.Path(),
              help="Write results here (default: standard output). With --engine spark, a .parquet path writes Parquet.")
@click.option("--stats", "show_stats", is_flag=True, help="Print the engine's work counters and timings to standard error.")
@click.option("--stats-json", "stats_path", type=click.Path(dir_okay=False), help="Write the counters and timings as JSON.")
@_spark_options
def match(subs_path: str, events_path: str, engine: str, output_path: str | None, show_stats: bool, stats_path: str | None,
          master: str | None, spark_conf: tuple[str, ...]) -> None:
    """Match events against subscriptions: one result line per event.

    Each line is {"event": ID, "subscriptions": [IDs, sorted]}, in input order.
    """
    if engine == "spark":
        stats = _match_spark(subs_path, events_path, output_path, master, spark_conf,
                             counters=show_stats or stats_path is not None)
        _report_match_stats(stats, engine, show_stats, stats_path)
        return
    if master or spark_conf:
        _fail_input("--master and --conf apply only to --engine spark")
    if output_path and output_path.rstrip("/").endswith(".parquet"):
        _fail_input(f"--output {output_path}: Parquet output needs --engine spark; the in-process engines write JSONL")
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
    _report_match_stats(stats, engine, show_stats, stats_path)


def _match_spark(subs_path, events_path, output_path, master, spark_conf, counters: bool = False) -> dict:
    """`subsum match --engine spark`: read, validate, match, write (spec/07-pipeline.md).
    With `counters`, the results are cached and counted after writing (extra jobs)."""
    from subsum.impl.spark import io as sio
    from subsum.impl.spark.match import match as spark_match

    started = time.perf_counter()
    spark = _spark_session(master, spark_conf, progress=err.is_terminal)
    ready = time.perf_counter()
    try:
        subscriptions = sio.read_subscriptions(spark, subs_path)
        events = sio.read_events(spark, events_path)
    except InputError as exc:
        _fail_input(str(exc))
    read = time.perf_counter()
    results = spark_match(subscriptions, events)
    if counters:
        results = results.cache()
    if output_path:
        from subsum.impl.spark.session import local_cores

        sio.write_results(results, output_path, stream_to_driver=local_cores(spark.sparkContext.master) is None)
        err.print(f"results -> {escape(output_path)}")
    else:
        for row in sio.result_lines(results).orderBy("ord").select("value").toLocalIterator():
            click.echo(row["value"])
    finished = time.perf_counter()
    stats = {"engine": "spark", "master": spark.sparkContext.master, "session_seconds": round(ready - started, 3),
             "read_seconds": round(read - ready, 3), "match_seconds": round(finished - read, 3)}
    if counters:
        from pyspark.sql import functions as F

        from subsum.impl.spark.match import attributes_of

        attributes = attributes_of(events)
        stats.update(subscriptions=subscriptions.count(), events=results.count(),
                     matches=results.agg(F.sum(F.size("subscriptions"))).first()[0] or 0,
                     attributes=attributes.count(),
                     distinct_attributes=attributes.select("name", "type", "i", "f", "s", "b").distinct().count())
    return stats


def _report_match_stats(stats: dict, engine: str, show_stats: bool, stats_path: str | None) -> None:
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


PROTOCOL_CHOICE = click.Choice(["strawman", "timed", "notified", "informed"])


def _finite_ms(_ctx, param, value: float) -> float:
    import math

    if not math.isfinite(value):
        raise click.BadParameter(f"expected a finite number of ms >= 0, got {value}")
    return value


def _timeout_options(fn):
    fn = click.option("--sub-timeout", type=click.FloatRange(0.0), default=5000.0, show_default=True, callback=_finite_ms,
                      help="Informed link activation: simulated ms before held-back subscriptions are reconsidered.")(fn)
    return click.option("--defer-timeout", type=click.FloatRange(0.0), default=3000.0, show_default=True, callback=_finite_ms,
                        help="Deferred unsubscriptions: simulated ms before the waiting UNSUBs run (0 is Strawman).")(fn)


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


@main.group()
def summary() -> None:
    """Subscription summaries (seed 000, spec/04-summaries.md): build a
    broker's summary, match events against it, inspect and merge summaries."""


def _read_summary(path: str):
    from subsum.impl.summary.wire import SummaryFileError, read_json

    try:
        return read_json(path)
    except SummaryFileError as exc:
        _fail_input(str(exc))


@summary.command("build")
@click.option("--subscriptions", "subs_path", required=True, type=click.Path(), help="JSONL file of the broker's subscriptions.")
@click.option("--broker", type=click.IntRange(0), default=0, show_default=True, help="This broker's number: the c1 field of every ID.")
@click.option("--brokers", type=click.IntRange(1), default=None, help="Brokers in the system; sets c1's width ⌈log2 brokers⌉. Default: broker + 1.")
@click.option("--max-subscriptions", type=click.IntRange(1), default=None,
              help="Most active subscriptions per broker; sets c2's width. Default: the number in the file.")
@click.option("--virtual", type=click.Choice(["none", "contains"]), default="none", show_default=True,
              help="Virtual string generalization (DEF-SUM-6): 'contains' joins prefix x and suffix x rows into contains x.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the summary file here (default: standard output).")
def summary_build(subs_path, broker, brokers, max_subscriptions, virtual, json_path) -> None:
    """Build one broker's summary from its subscriptions.

    The schema (c3's bits) is the sorted (name, type) keys the file
    constrains. Subscriptions that can never match (e.g. x < 1 and x > 2)
    are left out and listed on standard error.
    """
    from subsum.impl.summary import IdLayout, OwnerSummary, wire

    try:
        subscriptions = read_subscriptions(subs_path)
    except InputError as exc:
        _fail_input(str(exc))
    brokers = broker + 1 if brokers is None else brokers
    if broker >= brokers:
        _fail_input(f"--broker {broker} is outside 0 .. {brokers - 1} (--brokers {brokers})")
    max_subscriptions = max_subscriptions or len(subscriptions)
    if len(subscriptions) > max_subscriptions:
        _fail_input(f"{subs_path} holds {len(subscriptions)} subscriptions, more than --max-subscriptions {max_subscriptions}")
    schema = sorted({(c.name, c.type) for s in subscriptions for c in s.subscription.constraints})
    owner = OwnerSummary(broker, IdLayout(brokers, max_subscriptions, len(schema)), schema, virtual)
    left_out = [s.id for s in subscriptions if owner.add(s.id, s.subscription) is None]
    built = owner.export()
    if json_path:
        wire.write_json(built, json_path)
    else:
        click.echo(json.dumps(wire.to_json(built), indent=1, ensure_ascii=False))
    layout = built.layout
    err.print(f"broker {broker}: {len(subscriptions) - len(left_out)} subscriptions -> {built.row_count()} rows over "
              f"{len(built.structures)} attributes; IDs of {layout.bits} bits (c1 {layout.c1_bits}, c2 {layout.c2_bits}, "
              f"c3 {layout.c3_bits})" + (f" -> {escape(json_path)}" if json_path else ""), highlight=False, soft_wrap=True)
    if left_out:
        err.print(f"left out {len(left_out)} that can never match: {escape(', '.join(left_out))}", highlight=False, soft_wrap=True)


@summary.command("match")
@click.option("--summary", "summary_path", required=True, type=click.Path(), help="A summary file (subsum summary build --json).")
@click.option("--events", "events_path", required=True, type=click.Path(), help="JSONL file of events.")
@click.option("--subscriptions", "subs_path", type=click.Path(),
              help="The owners' exact subscriptions: re-check every candidate (DEF-SUM-10) and print only true matches.")
@click.option("--output", "output_path", type=click.Path(dir_okay=False), help="Write results here (default: standard output).")
def summary_match(summary_path, events_path, subs_path, output_path) -> None:
    """Match events against a summary (Algorithm 4-1): one line per event.

    Without --subscriptions each line lists the candidates, which may hold
    false positives but never miss a match. With it, the owners' re-check
    removes the false positives, and their number is reported.
    """
    from subsum.impl.summary.summary import recheck

    built = _read_summary(summary_path)
    try:
        events = read_events(events_path)
        exact = {s.id: s.subscription for s in read_subscriptions(subs_path)} if subs_path else None
    except InputError as exc:
        _fail_input(str(exc))
    names = {sid: built.names.get(sid, str(sid)) for sid in built.member_ids()}
    if exact is not None:
        missing = sorted(n for n in names.values() if n not in exact)
        if missing:
            _fail_input(f"{subs_path} does not hold {len(missing)} subscription(s) the summary names: {', '.join(missing[:5])}")
        by_sid = {sid: exact[name] for sid, name in names.items()}
    lines, candidates, removed = [], 0, 0
    for e in events:
        hit = built.match(e.event)
        candidates += len(hit)
        if exact is not None:
            kept = recheck(by_sid, e.event, hit)
            removed += len(hit) - len(kept)
            hit = kept
        lines.append((e.id, [names[sid] for sid in hit]))
    rendered = list(match_result_lines(lines))
    if output_path:
        write_lines_atomically(output_path, rendered)
    else:
        for line in rendered:
            click.echo(line)
    note = f"{len(events)} events against {built.row_count()} rows: {candidates} candidate matches"
    if exact is not None:
        note += f", {removed} false positives removed by the re-check"
    err.print(note + (f" -> {escape(output_path)}" if output_path else ""), highlight=False, soft_wrap=True)


def summary_statistics(built, json_bytes: int) -> dict:
    """Rows, ID-list lengths and sizes of a summary (DEF-SUM-15, DEF-SUM-16)."""
    from subsum.impl.summary import wire

    per_key = []
    for key, rows in built.rows().items():
        lengths = [len(ids) for _, _, ids in rows]
        per_key.append({"attribute": f"{key[0]}:{key[1]}", "ranges": sum(r[0] == "range" for r in rows),
                        "equalities": sum(r[0] == "equality" for r in rows), "rows": len(rows),
                        "ids": sum(lengths), "longest_id_list": max(lengths)})
    entries = sum(k["ids"] for k in per_key)
    formula = wire.formula_size(built)
    return {"attributes": per_key, "rows": built.row_count(), "id_entries": entries,
            "mean_id_list": round(entries / built.row_count(), 3) if built.row_count() else 0.0,
            "subscriptions": len(built.member_ids()), "unconditional": len(built.unconditional),
            "merged_brokers": sorted(built.merged_brokers), "id_bits": built.layout.bits,
            "formula_bytes": formula, "measured_bytes": len(wire.to_bytes(built)), "json_bytes": json_bytes}


@summary.command("stats")
@click.option("--summary", "summary_path", required=True, type=click.Path(), help="A summary file.")
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
def summary_stats(summary_path, as_json) -> None:
    """Rows and ID lists per attribute; size by the thesis's formula (seed 000
    §5.1, Table 5-2 sizes) and measured (binary encoding, and the file)."""
    import os

    built = _read_summary(summary_path)
    stats = summary_statistics(built, os.path.getsize(summary_path))
    if as_json:
        click.echo(json.dumps(stats, indent=2))
        return
    table = Table(title=f"summary {escape(summary_path)}")
    for column in ("attribute", "ranges", "equalities", "rows", "ids", "longest ID list"):
        table.add_column(column, justify="left" if column == "attribute" else "right")
    for k in stats["attributes"]:
        table.add_row(escape(k["attribute"]), *(str(k[c]) for c in ("ranges", "equalities", "rows", "ids", "longest_id_list")))
    out.print(table)
    f = stats["formula_bytes"]
    out.print(soft_wrap=True, highlight=False, *[f"{stats['subscriptions']} subscriptions, {stats['rows']} rows, {stats['id_entries']} ID entries "
              f"(mean list {stats['mean_id_list']}), IDs of {stats['id_bits']} bits, brokers {stats['merged_brokers']}"])
    out.print(soft_wrap=True, highlight=False, *[f"bytes by the thesis's formula: {f['total']:,.0f} (AACS {f['aacs']:,.0f}, SACS {f['sacs']:,.0f}); "
              f"measured: {stats['measured_bytes']:,} binary, {stats['json_bytes']:,} JSON file"])


@summary.command("merge")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="Write the merged summary here.")
@click.argument("summaries", nargs=-1, required=True, type=click.Path())
def summary_merge(out_path, summaries) -> None:
    """Merge brokers' summaries into one (DEF-SUM-13); Merged_Brokers is the union."""
    from subsum.impl.summary import wire
    from subsum.impl.summary.summary import SummaryError

    loaded = [_read_summary(p) for p in summaries]
    merged = loaded[0].copy()
    for path, other in zip(summaries[1:], loaded[1:]):
        try:
            merged.merge_in(other)
        except SummaryError as exc:
            _fail_input(f"{path}: {exc}")
    wire.write_json(merged, out_path)
    err.print(f"merged {len(loaded)} summaries (brokers {sorted(merged.merged_brokers)}) -> {merged.row_count()} rows "
              f"-> {escape(out_path)}", highlight=False, soft_wrap=True)


@bench.command("summaries")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="benchmarks/results/summaries", show_default=True,
              help="Folder for summaries.csv, sizes.png, false_positives.png, throughput.png and summary.json.")
@click.option("--quick", is_flag=True, help="S = 200, E = 200, one timed run (a few seconds).")
@click.option("--subscriptions", type=click.IntRange(1), default=1000, show_default=True, help="Subscriptions at the broker (Table 5-2's S).")
@click.option("--events", type=click.IntRange(1), default=2000, show_default=True, help="Events matched per covering probability.")
@click.option("--repeat", type=click.IntRange(1, 100), default=3, show_default=True, help="Timed runs per measurement (best reported).")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the workload generator.")
def bench_summaries(out_dir, quick, subscriptions, events, repeat, seed) -> None:
    """Seed 000 Table 5-2: summary size (formula and measured) against the raw
    subscriptions, the false-positive rate before the owner's re-check, and
    summary-match throughput against the indexed engine, per covering
    probability. Every candidate set is cross-checked against the engine."""
    from pathlib import Path

    from subsum.bench import summaries as bs

    result = bs.run(Path(out_dir), subscriptions=subscriptions, events=events, repeat=repeat, seed=seed, quick=quick,
                    log=lambda m: err.print(escape(m), highlight=False, soft_wrap=True))
    out.print(bs.markdown_table(result["rows"]), markup=False, highlight=False, soft_wrap=True)
    if result["disagreements"]:
        err.print("[bold red]cross-checks failed:[/] " + escape("; ".join(result["disagreements"])))
        sys.exit(1)


@bench.command("network")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="benchmarks/results/network", show_default=True,
              help="Folder for network.csv, throughput.png, swaps.png and summary.json.")
@click.option("--quick", is_flag=True, help="200 brokers, 2,000 subscriptions, 500 events, 100 swaps, 5 s of fuzzing per size.")
@click.option("--brokers", type=click.IntRange(2, 100_000), default=1000, show_default=True, help="Brokers in the throughput tree.")
@click.option("--subscriptions", type=click.IntRange(1), default=10_000, show_default=True, help="Subscriptions in the throughput tree.")
@click.option("--events", type=click.IntRange(1), default=5000, show_default=True, help="Events routed in the throughput tree.")
@click.option("--swaps", type=click.IntRange(1), default=1000, show_default=True,
              help="Strawman link swaps, one at a time, on a 200-broker random tree with 1,000 subscriptions.")
@click.option("--fuzz-budget", type=click.FloatRange(1.0), default=30.0, show_default=True,
              help="Seconds of `subsum fuzz reconfig` per schedule size (6 and 20 brokers).")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of every workload.")
def bench_network(out_dir, quick, brokers, subscriptions, events, swaps, fuzz_budget, seed) -> None:
    """The broker simulator (seed 002, issue 5): handled messages per second
    beside a bare heapq loop, SUB/UNSUB traffic and lost events of Strawman
    link swaps, and fuzz throughput in schedules per minute."""
    from pathlib import Path

    from subsum.bench import network as bn

    result = bn.run(Path(out_dir), quick=quick, brokers=brokers, subscriptions=subscriptions, events=events, swaps=swaps,
                    fuzz_budget=fuzz_budget, seed=seed, log=lambda m: err.print(escape(m), highlight=False, soft_wrap=True))
    out.print(bn.markdown_table(result), markup=False, highlight=False, soft_wrap=True)
    if any(f["violations"] for f in result["fuzz"]):
        err.print("[bold red]the fuzzer found violations while benchmarking[/]")
        sys.exit(1)


@bench.command("reconfig")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="benchmarks/results/reconfig", show_default=True,
              help="Folder for reconfig.csv, control.png, lost.png, stale.png and summary.json.")
@click.option("--quick", is_flag=True, help="Trees of 20 and 100 brokers, two densities, 5 reconfigurations each (about a minute).")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the trees, workloads and overlay choices.")
@click.option("--protocol", "protocols", type=click.Choice(["timed", "notified", "informed"]), multiple=True,
              help="Run only these optimized protocols (repeatable); Strawman always runs, as the baseline.")
@_timeout_options
def bench_reconfig(out_dir, quick, seed, protocols, defer_timeout, sub_timeout) -> None:
    """Strawman, timed, notified and informed side by side on the same
    schedules: random and balanced trees of 20, 100 and 500 brokers, sparse
    to dense subscriptions, link swaps with a shared or disjoint endpoints,
    broker crashes, concurrent swaps. Reports control messages per
    reconfiguration and the reduction against Strawman, deliveries lost,
    and stale-route event traffic."""
    from pathlib import Path

    from subsum.bench import reconfig as br

    chosen = ("strawman", *[p for p in br.PROTOCOLS[1:] if not protocols or p in protocols])
    result = br.run(Path(out_dir), quick=quick, seed=seed, protocols=chosen, defer_timeout=defer_timeout, sub_timeout=sub_timeout,
                    log=lambda m: err.print(escape(m), highlight=False, soft_wrap=True))
    out.print(br.markdown_table(result), markup=False, highlight=False, soft_wrap=True)


@bench.command("spark")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="benchmarks/results/spark", show_default=True,
              help="Where spark.csv, spark.png and summary.json go.")
@click.option("--quick", is_flag=True, help="E up to 10^5, S up to 10^4 (a few minutes).")
@click.option("--max-events", type=click.IntRange(10_000), default=10_000_000, show_default=True,
              help="Largest point of the events series.")
@click.option("--in-process-max-events", type=click.IntRange(0), default=10_000_000, show_default=True,
              help="Skip the in-process engines above this many events.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the workload generator.")
def bench_spark(out_dir, quick, max_events, in_process_max_events, seed) -> None:
    """Spark (local[*], and local[1] at one point) beside the vectorized engine
    and DuckDB, E from 10^4 to 10^7 and S from 10^3 to 10^5 (benchmarks/README.md)."""
    from subsum.bench import spark as bs
    from subsum.impl.spark.session import SparkUnavailable, check_java

    try:
        check_java()
    except SparkUnavailable as exc:
        _fail_input(str(exc))
    summary = bs.run(out_dir, quick=quick, seed=seed, max_events=max_events, in_process_max_events=in_process_max_events,
                     log=lambda line: err.print(escape(line), highlight=False, soft_wrap=True))
    out.print(bs.markdown_table(summary["rows"]), highlight=False, soft_wrap=True)
    out.print(f"{summary['crossover']}; {summary['seconds']} s; results in {escape(out_dir)}", highlight=False, soft_wrap=True)


@main.group()
def fuzz() -> None:
    """Fuzzers: random schedules checked against the model; violations are saved as replay files."""


@fuzz.command("reconfig")
@click.option("--protocol", type=PROTOCOL_CHOICE, default="strawman", show_default=True,
              help="Reconfiguration protocol (spec/05 Strawman, spec/06 the optimized ones).")
@_timeout_options
@click.option("--topology", default="random-tree", show_default=True,
              help="random-tree, path, star, balanced, or a networkx edge-list FILE (cycles are cut to a BFS spanning tree).")
@click.option("--brokers", type=click.IntRange(1, 10_000), default=6, show_default=True, help="Brokers per schedule (ignored for a FILE).")
@click.option("--subscriptions", type=click.IntRange(0), default=8, show_default=True,
              help="About twice the clients: clients = max(1, N // 2), spread at random.")
@click.option("--churn", type=click.FloatRange(0.0, 1.0), default=0.1, show_default=True, help="Share of operations that change the overlay.")
@click.option("--steps", type=click.IntRange(1), default=60, show_default=True, help="Operations per schedule (then a final quiesce).")
@click.option("--seed", type=int, default=0, show_default=True, help="Schedule i uses seed + i.")
@click.option("--budget", type=click.FloatRange(0.1), default=30.0, show_default=True, help="Seconds to fuzz.")
@click.option("--schedules", type=click.IntRange(1), default=None, help="Stop after this many schedules.")
@click.option("--max-violations", type=click.IntRange(1), default=10, show_default=True, help="Stop after this many violations.")
@click.option("--replay-dir", type=click.Path(file_okay=False), default="fuzz-replays", show_default=True, help="Where replay files go.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the run's summary as JSON.")
def fuzz_reconfig(protocol, defer_timeout, sub_timeout, topology, brokers, subscriptions, churn, steps, seed, budget, schedules,
                  max_violations, replay_dir, json_path):
    """Random subscribe/unsubscribe/publish/deliver/timer/churn schedules on
    the broker simulator. Every handler is checked against the model's
    (CLM-NET-6, and CLM-RCF-4, 5, 7 for the optimized protocols), the
    overlay after every operation (CLM-NET-1, 4), the tables after every
    quiesce (CLM-NET-2, CLM-RCF-1), and delivery in quiescent static states
    (CLM-NET-3). Exits 1 if any violation was found."""
    from pathlib import Path

    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from subsum.conformance import fuzz as fz
    from subsum.impl.network import TopologyError

    if topology not in ("random-tree", "path", "star", "balanced") and not Path(topology).is_file():
        _fail_input(f"--topology {topology!r} is neither random-tree, path, star, balanced nor a file")
    with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("fuzzing", total=budget)

        def progress(r):
            bar.update(task, completed=min(r.seconds, budget),
                       description=f"{r.schedules} schedules, {r.operations} operations, {len(r.violations)} violations")

        try:
            result = fz.fuzz(topology=topology, brokers=brokers, subscriptions=subscriptions, churn=churn, steps=steps, seed=seed,
                             budget=budget, schedules=schedules, replay_dir=Path(replay_dir), protocol=protocol,
                             defer_timeout=defer_timeout, sub_timeout=sub_timeout, max_violations=max_violations,
                             progress=progress)
        except TopologyError as exc:
            _fail_input(str(exc))
    rate = result.schedules / result.seconds * 60 if result.seconds else 0.0
    out.print(f"{protocol}: {result.schedules} schedules, {result.operations} operations in {result.seconds:.1f} s "
              f"({rate:,.0f} schedules/min); {len(result.violations)} violations", highlight=False, soft_wrap=True)
    for path, claim in zip(result.violations, result.claims):
        out.print(f"  {claim}: {escape(str(path))}   (subsum replay {escape(str(path))})", highlight=False, soft_wrap=True)
    if json_path:
        summary = {"protocol": protocol, "defer_timeout": defer_timeout, "sub_timeout": sub_timeout, "topology": topology, "brokers": brokers, "churn": churn, "steps": steps, "seed": seed,
                   "schedules": result.schedules, "operations": result.operations, "seconds": round(result.seconds, 3),
                   "schedules_per_minute": round(rate, 1), "first_violation_seconds": result.first_violation_seconds,
                   "violations": [{"claim": c, "replay": str(p)} for p, c in zip(result.violations, result.claims)]}
        write_lines_atomically(json_path, [json.dumps(summary, indent=2)])
    sys.exit(1 if result.violations else 0)


@main.command("simulate")
@click.option("--protocol", type=PROTOCOL_CHOICE, default="strawman", show_default=True, help="Reconfiguration protocol.")
@_timeout_options
@click.option("--topology", default="random-tree", show_default=True, help="random-tree, path, star, balanced, or a networkx edge-list FILE.")
@click.option("--brokers", type=click.IntRange(1, 100_000), default=20, show_default=True, help="Brokers (ignored for a FILE).")
@click.option("--subscriptions", type=click.IntRange(0), default=100, show_default=True, help="Subscriptions, two per client.")
@click.option("--events", type=click.IntRange(0), default=100, show_default=True, help="Events published.")
@click.option("--swaps", type=click.IntRange(0), default=0, show_default=True, help="Link swaps spread among the publications.")
@click.option("--gap", type=click.FloatRange(0.0), default=5.0, show_default=True, help="Simulated ms between a swap's break and its new link.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds the topology, the workload and the link delays.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), help="Write the trace (spec/05-network.md DEF-NET-9) as JSONL.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the counters as JSON.")
def simulate_cmd(protocol, defer_timeout, sub_timeout, topology, brokers, subscriptions, events, swaps, gap, seed, trace_path, json_path):
    """Run a seeded workload on the broker simulator (subscription forwarding,
    reconfiguration by the chosen protocol) and print the message counters."""
    from pathlib import Path

    from subsum.bench import network as bn
    from subsum.impl.network import TopologyError
    from subsum.impl.network.trace import write_trace

    if topology not in ("random-tree", "path", "star", "balanced") and not Path(topology).is_file():
        _fail_input(f"--topology {topology!r} is neither random-tree, path, star, balanced nor a file")
    started = time.perf_counter()
    try:
        net, made = bn.simulate(topology, brokers, subscriptions, events, swaps, gap, seed, trace=trace_path is not None,
                                protocol=protocol, defer_timeout=defer_timeout, sub_timeout=sub_timeout)
    except TopologyError as exc:
        _fail_input(str(exc))
    seconds = time.perf_counter() - started
    summary = {"protocol": protocol, "brokers": len(net.brokers), "clients": len(net.clients), "events": events, "swaps": made,
               "sent": dict(net.ledger.sent), "handled": dict(net.ledger.handled), "dropped": dict(net.ledger.dropped),
               "deliveries": sum(sum(c.values()) for c in net.ledger.deliveries.values()),
               **bn.delivery_audit(net, net.published),
               "simulated_ms": round(net.now, 3), "seconds": round(seconds, 3),
               "handled_per_second": round(sum(net.ledger.handled.values()) / seconds) if seconds else None}
    if trace_path:
        write_trace(net.ledger.trace, trace_path)
        summary["trace"] = trace_path
    if json_path:
        write_lines_atomically(json_path, [json.dumps(summary, indent=2)])
    table = Table(title="subsum simulate")
    table.add_column("counter")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        table.add_row(escape(key), escape(json.dumps(value) if isinstance(value, dict) else str(value)))
    out.print(table)


@main.command("trace-check")
@click.argument("trace_path", metavar="TRACE", type=click.Path())
@click.option("--grace", "grace_s", type=float, required=True,
              help="Grace window in seconds (the trace's times are milliseconds: 0.05 = 50 ms).")
@click.option("--window", "window_s", type=float, default=1.0, show_default=True,
              help="Width in seconds of the time windows the report counts violations in.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Write violations.parquet and summary.json here.")
@_spark_options
def trace_check_cmd(trace_path, grace_s, window_s, out_dir, master, spark_conf):
    """Check a simulator trace (DEF-NET-9) for duplicate, spurious and missed
    deliveries (spec/07-pipeline.md DEF-TRACE-3) on Spark.

    Exits 0 when the trace has no violation, 1 when it has any, 2 on bad input."""
    import math
    from pathlib import Path

    from subsum.impl.spark import trace as strace

    for name, value, low in (("--grace", grace_s, 0.0), ("--window", window_s, None)):
        if not math.isfinite(value) or (value < 0 if low is not None else value <= 0):
            _fail_input(f"{name} must be a finite number {'>= 0' if low is not None else '> 0'}, got {value}")
    started = time.perf_counter()
    spark = _spark_session(master, spark_conf, progress=err.is_terminal)
    try:
        records = strace.read_trace(spark, trace_path)
    except InputError as exc:
        _fail_input(str(exc))
    report = strace.check(records, grace_s * 1000.0, window_s * 1000.0)
    windows = [dict(row.asDict()) for row in strace.per_window(report.violations).limit(10_000).collect()]
    summary = {"trace": trace_path, "grace_seconds": grace_s, "window_seconds": window_s, **report.totals,
               "violations": report.counts, "ok": not any(report.counts.values()),
               "windows": [{"window_start_ms": w["window_start"], **{c: w.get(c, 0) for c in strace.CAUSES}}
                           for w in windows],
               "seconds": round(time.perf_counter() - started, 3)}
    if out_dir:
        out_path = Path(out_dir)
        out_path.mkdir(parents=True, exist_ok=True)
        (report.violations.orderBy("cause", "event", "client", "time")
         .write.mode("overwrite").parquet(str(out_path / "violations.parquet")))
        write_lines_atomically(out_path / "summary.json", [json.dumps(summary, indent=2)])
    table = Table(title=f"trace-check, grace {grace_s:g} s", min_width=36)
    table.add_column("cause")
    table.add_column("violations", justify="right")
    for cause in strace.CAUSES:
        table.add_row(cause, f"{report.counts[cause]:,}")
    out.print(table)
    shown = [w for w in summary["windows"] if any(w[c] for c in strace.CAUSES)][:20]
    if shown:
        by_window = Table(title=f"per {window_s:g} s window (first {len(shown)} with violations)")
        by_window.add_column("window start (ms)", justify="right")
        for cause in strace.CAUSES:
            by_window.add_column(cause, justify="right")
        for w in shown:
            by_window.add_row(f"{w['window_start_ms']:g}", *(f"{w[c]:,}" for c in strace.CAUSES))
        out.print(by_window)
    totals = report.totals
    out.print(f"{totals['records']:,} records: {totals['publications']:,} publications, {totals['deliveries']:,} deliveries, "
              f"{totals['subscribe_records']:,} subscribes, {totals['unsubscribe_records']:,} unsubscribes"
              + (f"; results in {escape(out_dir)}" if out_dir else ""), highlight=False)
    sys.exit(0 if summary["ok"] else 1)


@main.command("replay")
@click.argument("path", type=click.Path())
def replay_cmd(path):
    """Re-run a fuzz replay file exactly and print the violated claim (exit 1), or say it no longer fails (exit 0)."""
    from subsum.conformance import fuzz as fz

    try:
        doc = fz.load_replay(path)
        violation = fz.replay(path)
    except fz.ReplayError as exc:
        _fail_input(str(exc))
    recorded = doc.get("violation", {})
    if violation is None:
        out.print(f"{escape(path)}: no violation now (recorded: {escape(str(recorded.get('claim')))} at step {recorded.get('step')})",
                  highlight=False, soft_wrap=True)
        sys.exit(0)
    out.print(f"{violation.claim} violated at step {violation.step} of {len(doc['schedule'])}: {escape(violation.message)}",
              highlight=False, soft_wrap=True)
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
