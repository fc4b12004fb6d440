"""Example plug-ins for subsum (examples/plugins/README.md): each kind of
component, once written correctly and once with a planted bug.

- `brokers.TidyBroker`, `brokers.ForgetfulBroker`: subscription forwarding;
- `engines.ScanEngine`, `engines.SloppyWildcardEngine`: matching engines;
- `caches.ListLRU`, `caches.StaleLRU`: LRU caches.
"""
