"""subsum summary build | match | stats | merge | plan: subscription summaries
(seed 000, spec/04-summaries.md) and their propagation plan (spec/08-summary-routing.md)."""

from __future__ import annotations

import json
import os

import click
from rich.markup import escape
from rich.table import Table

from subsum.cli.common.console import out, say
from subsum.cli.common.options import distinct_files, format_option, output_option
from subsum.core.errors import SubsumError
from subsum.core.jsonio import match_result_lines, read_events, read_subscriptions
from subsum.core.outputs import write_lines_atomically
from subsum.impl.network.protocols.summaries.plan import plan
from subsum.impl.network.topology import INTEGER_LABEL, read_graph
from subsum.impl.summary import IdLayout, OwnerSummary, summary_file
from subsum.impl.summary.recheck import recheck
from subsum.impl.summary.stats import statistics
from subsum.impl.summary.summary import SummaryError
from subsum.impl.summary.summary_file import read_json


@click.group()
def summary() -> None:
    """Subscription summaries (seed 000, spec/04-summaries.md): build a
    broker's summary, match events against it, inspect and merge summaries."""


@summary.command("build")
@click.option("--subscriptions", "subs_path", required=True, type=click.Path(), help="JSONL file of the broker's subscriptions.")
@click.option("--broker", type=click.IntRange(0, 2**32 - 2), default=0, show_default=True, help="This broker's number: the c1 field of every ID.")
@click.option("--brokers", type=click.IntRange(1, 2**32 - 1), default=None, help="Brokers in the system; sets c1's width ⌈log2 brokers⌉. Default: broker + 1.")
@click.option("--max-subscriptions", type=click.IntRange(1, 2**32 - 1), default=None,
              help="Most active subscriptions per broker; sets c2's width. Default: the number in the file.")
@click.option("--virtual", type=click.Choice(["none", "contains"]), default="none", show_default=True,
              help="Virtual string generalization (DEF-SUM-6): 'contains' joins prefix x and suffix x rows into contains x.")
@output_option("Write the summary file here (default: standard output).")
def summary_build(subs_path, broker, brokers, max_subscriptions, virtual, output_path) -> None:
    """Build one broker's summary from its subscriptions.

    The schema (c3's bits) is the sorted (name, type) keys the file
    constrains. Subscriptions that can never match (e.g. x < 1 and x > 2)
    are left out and listed on standard error.
    """

    distinct_files({"subscriptions": subs_path}, {"output": output_path})
    subscriptions = read_subscriptions(subs_path)
    brokers = broker + 1 if brokers is None else brokers
    if broker >= brokers:
        raise SubsumError(f"--broker {broker} is outside 0 .. {brokers - 1} (--brokers {brokers})")
    max_subscriptions = max_subscriptions or len(subscriptions)
    if len(subscriptions) > max_subscriptions:
        raise SubsumError(f"{subs_path} holds {len(subscriptions)} subscriptions, more than --max-subscriptions {max_subscriptions}")
    schema = sorted({(c.name, c.type) for s in subscriptions for c in s.subscription.constraints})
    owner = OwnerSummary(broker, IdLayout(brokers, max_subscriptions, len(schema)), schema, virtual)
    left_out = [s.id for s in subscriptions if owner.add(s.id, s.subscription) is None]
    built = owner.export()
    if output_path:
        summary_file.write_json(built, output_path)
    else:
        click.echo(json.dumps(summary_file.to_json(built), indent=1, ensure_ascii=False))
    layout = built.layout
    say(f"broker {broker}: {len(subscriptions) - len(left_out)} subscriptions -> {built.row_count()} rows over "
        f"{len(built.structures)} attributes; IDs of {layout.bits} bits (c1 {layout.c1_bits}, c2 {layout.c2_bits}, "
        f"c3 {layout.c3_bits})" + (f" -> {output_path}" if output_path else ""))
    if left_out:
        say(f"left out {len(left_out)} that can never match: {', '.join(left_out)}")


@summary.command("match")
@click.option("--summary", "summary_path", required=True, type=click.Path(), help="A summary file (subsum summary build --output).")
@click.option("--events", "events_path", required=True, type=click.Path(), help="JSONL file of events.")
@click.option("--subscriptions", "subs_path", type=click.Path(),
              help="The owners' exact subscriptions: re-check every candidate (DEF-SUM-10) and print only true matches.")
@output_option("Write the result lines here (default: standard output).")
def summary_match(summary_path, events_path, subs_path, output_path) -> None:
    """Match events against a summary (Algorithm 4-1): one line per event.

    Without --subscriptions each line lists the candidates, which may hold
    false positives but never miss a match. With it, the owners' re-check
    removes the false positives, and their number is reported.
    """

    distinct_files({"summary": summary_path, "events": events_path, "subscriptions": subs_path}, {"output": output_path})
    built = read_json(summary_path)
    events = read_events(events_path)
    exact = {s.id: s.subscription for s in read_subscriptions(subs_path)} if subs_path else None
    names = {sid: built.names.get(sid, str(sid)) for sid in built.member_ids()}
    if exact is not None:
        missing = sorted(n for n in names.values() if n not in exact)
        if missing:
            raise SubsumError(f"{subs_path} does not hold {len(missing)} subscription(s) the summary names: {', '.join(missing[:5])}")
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
    say(note + (f" -> {output_path}" if output_path else ""))


@summary.command("stats")
@click.option("--summary", "summary_path", required=True, type=click.Path(), help="A summary file.")
@format_option
def summary_stats(summary_path, fmt) -> None:
    """Rows and ID lists per attribute; size by the thesis's formula (seed 000
    §5.1, Table 5-2 sizes) and measured (binary encoding, and the file)."""

    stats = statistics(read_json(summary_path), os.path.getsize(summary_path))
    if fmt == "json":
        click.echo(json.dumps(stats, indent=2))
        return
    table = Table(title=f"summary {escape(summary_path)}")
    for column in ("attribute", "ranges", "equalities", "rows", "ids", "longest ID list"):
        table.add_column(column, justify="left" if column == "attribute" else "right")
    for k in stats["attributes"]:
        table.add_row(escape(k["attribute"]), *(str(k[c]) for c in ("ranges", "equalities", "rows", "ids", "longest_id_list")))
    out.print(table)
    f = stats["formula_bytes"]
    out.print(f"{stats['subscriptions']} subscriptions, {stats['rows']} rows, {stats['id_entries']} ID entries "
              f"(mean list {stats['mean_id_list']}), IDs of {stats['id_bits']} bits, brokers {stats['merged_brokers']}",
              soft_wrap=True, highlight=False, markup=False)
    out.print(f"bytes by the thesis's formula: {f['total']:,.0f} (AACS {f['aacs']:,.0f}, SACS {f['sacs']:,.0f}); "
              f"measured: {stats['measured_bytes']:,} binary, {stats['json_bytes']:,} JSON file",
              soft_wrap=True, highlight=False, markup=False)


@summary.command("merge")
@output_option("Write the merged summary here.", required=True)
@click.argument("summaries", nargs=-1, required=True, type=click.Path())
def summary_merge(output_path, summaries) -> None:
    """Merge brokers' summaries into one (DEF-SUM-13); Merged_Brokers is the union.
    They must share one ID layout (the same --brokers when built)."""

    loaded = [summary_file.read_json(p) for p in summaries]
    merged = loaded[0].copy()
    for path, other in zip(summaries[1:], loaded[1:]):
        try:
            merged.merge_in(other)
        except SummaryError as exc:
            raise SubsumError(f"{path}: {exc}") from None
    summary_file.write_json(merged, output_path)
    say(f"merged {len(loaded)} summaries (brokers {sorted(merged.merged_brokers)}) -> {merged.row_count()} rows -> {output_path}")


@summary.command("plan")
@click.option("--topology", "topology_path", required=True, type=click.Path(dir_okay=False),
              help="A networkx edge-list FILE of the broker graph (every link is kept; cycles are allowed).")
@format_option
def summary_plan(topology_path, fmt) -> None:
    """Print the summary propagation plan (Algorithm 4-2, DEF-SR-1): who
    sends its merged summary to whom, in which iteration, each sink's
    Merged_Brokers list, and the number of messages.

    Brokers act in order of (degree, name); integer names order
    numerically, other names by first appearance in the file.
    """

    labels, edges = read_graph(topology_path)
    adjacency: dict[int, set[int]] = {i: set() for i in range(len(labels))}
    for a, b in edges:
        adjacency[a].add(b)
        adjacency[b].add(a)
    p = plan(adjacency)

    numeric = all(INTEGER_LABEL.fullmatch(x) for x in labels)

    def name(i: int) -> str | int:
        return int(labels[i]) if numeric else labels[i]

    sends = [{"iteration": i, "from": name(s), "to": name(r)} for i, s, r in p.sends]
    sinks = [(name(s), [name(b) for b in sorted(p.merged[s])]) for s in p.sinks]
    report = {"brokers": len(labels), "links": len(edges), "messages": len(p.sends), "sends": sends,
              "sinks": [{"sink": sink, "merged_brokers": merged} for sink, merged in sinks]}
    if fmt == "json":
        click.echo(json.dumps(report, indent=1, ensure_ascii=False))
        return
    say(f"{topology_path}: {len(labels)} brokers, {len(edges)} links")
    send_table = Table(title=f"propagation plan: {len(p.sends)} messages, {len(p.sinks)} sinks")
    for column in ("iteration", "from", "to"):
        send_table.add_column(column, justify="right")
    for row in sends:
        send_table.add_row(*(str(row[c]) for c in ("iteration", "from", "to")))
    out.print(send_table)
    sink_table = Table(title="sinks")
    sink_table.add_column("sink", justify="right")
    sink_table.add_column("Merged_Brokers")
    for sink, merged in sinks:
        sink_table.add_row(str(sink), "{" + ", ".join(map(str, merged)) + "}")
    out.print(sink_table)


COMMANDS = (summary,)
