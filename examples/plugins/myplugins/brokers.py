"""Two broker protocols written as subsum plug-ins (spec/11-plugins.md).

`TidyBroker` re-implements subscription forwarding's SUB and UNSUB handlers
(seed 002 §2.3, spec/05 DEF-NET-6) in its own words. `ForgetfulBroker` is
the same broker with a planted bug: it forgets the second-subscriber rule.
When a filter that only neighbor `first` had subscribed gets a second
subscriber, the broker must now subscribe to it at `first`, because events
published behind `first` now have somewhere else to go. ForgetfulBroker
does not, so those events are lost.

Both subclass `StrawmanBroker`, so they keep its `table` (filter ->
subscribers) and its events and reconfiguration, and `subsum fuzz reconfig
--protocol myplugins.brokers:TidyBroker` checks every handler step against
the model's.

A handler takes the message's sender, its payload and `out`, the broker's
out-buffer (spec/05 DEF-NET-2): it changes the broker's own table and writes
every message it sends as `out.send(dst, kind, payload)`; the simulator
delivers them when the handler returns.
"""

from subsum.impl.network import CLIENT_BASE, StrawmanBroker


def is_broker(node: int) -> bool:
    return node < CLIENT_BASE


class TidyBroker(StrawmanBroker):
    """Subscription forwarding, each rule of DEF-NET-6 a line of its own."""

    def sub_received(self, n, f, out):
        if n not in self.neighbors:
            return  # a stale SUB from a former neighbor
        subscribers = self.table.get(f, set())
        if n in subscribers:
            return  # a repeat changes nothing
        before = set(subscribers)
        self.insert_entry(n, f, out)
        if not before:  # the first subscriber: tell every other broker neighbor
            for m in self.neighbors:
                if m != n and is_broker(m):
                    out.send(m, "SUB", f)
        elif len(before) == 1:  # the second subscriber: tell the first one
            (first,) = before
            if is_broker(first):
                out.send(first, "SUB", f)

    def unsub_received(self, n, f, out):
        if n in self.table.get(f, ()):
            self.process_unsub_from(n, f, out)


class ForgetfulBroker(TidyBroker):
    """TidyBroker with a planted bug: no SUB to the first subscriber when a second one arrives."""

    def sub_received(self, n, f, out):
        if n not in self.neighbors or n in self.table.get(f, ()):
            return
        first_time = f not in self.table
        self.insert_entry(n, f, out)
        if first_time:
            for m in self.neighbors:
                if m != n and is_broker(m):
                    out.send(m, "SUB", f)
        # BUG: the second-subscriber rule is missing here
