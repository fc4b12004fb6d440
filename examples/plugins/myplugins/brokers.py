"""Two broker protocols written as subsum plug-ins (spec/11-plugins.md).

`TidyBroker` re-implements subscription forwarding's SUB and UNSUB handlers
(seed 002 §2.3, spec/05 DEF-NET-6) in its own words. `ForgetfulBroker` is
the same broker with a planted bug: it forgets the second-subscriber rule.
When a filter that only neighbour `first` had subscribed gets a second
subscriber, the broker must now subscribe to it at `first`, because events
published behind `first` now have somewhere else to go. ForgetfulBroker
does not, so those events are lost.

Both subclass `StrawmanBroker`, so they keep its `table` (filter ->
subscribers) and its events and reconfiguration, and `subsum fuzz reconfig
--protocol myplugins.brokers:TidyBroker` checks every handler step against
the model's.
"""

from subsum.impl.network import CLIENT_BASE, StrawmanBroker


def is_broker(node: int) -> bool:
    return node < CLIENT_BASE


class TidyBroker(StrawmanBroker):
    """Subscription forwarding, each rule of DEF-NET-6 a line of its own."""

    def sub_received(self, n, f):
        if n not in self.neighbors:
            return  # a stale SUB from a former neighbour
        subscribers = self.table.get(f, set())
        if n in subscribers:
            return  # a repeat changes nothing
        before = set(subscribers)
        self.insert_entry(n, f)
        if not before:  # the first subscriber: tell every other broker neighbour
            for m in self.neighbors:
                if m != n and is_broker(m):
                    self.net.send(self.id, m, "SUB", f)
        elif len(before) == 1:  # the second subscriber: tell the first one
            (first,) = before
            if is_broker(first):
                self.net.send(self.id, first, "SUB", f)

    def unsub_received(self, n, f):
        if n in self.table.get(f, ()):
            self.process_unsub_from(n, f)


class ForgetfulBroker(TidyBroker):
    """TidyBroker with a planted bug: no SUB to the first subscriber when a second one arrives."""

    def sub_received(self, n, f):
        if n not in self.neighbors or n in self.table.get(f, ()):
            return
        first_time = f not in self.table
        self.insert_entry(n, f)
        if first_time:
            for m in self.neighbors:
                if m != n and is_broker(m):
                    self.net.send(self.id, m, "SUB", f)
        # BUG: the second-subscriber rule is missing here
