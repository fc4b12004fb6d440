"""Two LRU caches written as subsum plug-ins (spec/11-plugins.md).

A cache plug-in names, in `name`, the built-in policy it implements (here
"lru", spec/09 DEF-CACHE-5); `subsum verify --cache myplugins.caches:ListLRU`
runs CLM-CACHE-1's state machine against that policy's reference.
`ListLRU` keeps a plain list, least recently used first. `StaleLRU` has a
planted bug: a hit moves the message to the front only the first time it is
hit, so a message hit long ago and never since outlives newer ones.
"""


class ListLRU:
    """LRU over a list, the next victim first. Every operation takes the caller's time."""

    name = "lru"

    def __init__(self, capacity):
        self.capacity = capacity
        self.now = 0.0
        self.order_ = []  # least recently used first
        self.used = {}  # message -> time of its last insert or hit

    def __contains__(self, m):
        return m in self.used

    def __len__(self):
        return len(self.order_)

    def advance(self, now):
        self.now = now

    def insert(self, m, now):
        self.now = now
        if m in self.used:
            return None
        victim = None
        if self.capacity is not None and len(self.order_) >= self.capacity:
            victim = self.order_.pop(0)
            del self.used[victim]
        self.order_.append(m)
        self.used[m] = now
        return victim

    def hit(self, messages, now):
        self.now = now
        for m in sorted(set(messages) & set(self.used), key=self.order_.index):  # keep their relative order
            self.touch(m, now)

    def touch(self, m, now):
        self.order_.remove(m)
        self.order_.append(m)
        self.used[m] = now

    def unsubscribed(self, messages, now):
        self.now = now  # LRU ignores unsubscriptions

    def order(self):
        return self.order_[::-1]  # head (most recent) first, the next victim last

    def metadata(self, m):
        return {"last": self.used[m]}


class StaleLRU(ListLRU):
    """ListLRU with a planted bug: only a message's first hit counts."""

    def __init__(self, capacity):
        super().__init__(capacity)
        self.hit_once = set()

    def touch(self, m, now):
        if m in self.hit_once:
            return  # BUG: later hits are forgotten
        self.hit_once.add(m)
        super().touch(m, now)
