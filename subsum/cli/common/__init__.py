"""What every command shares: `options` (the one option grammar and its
checks), `network_options` (the simulator's timing options), `console`
(stdout and stderr, text or JSON) and `progress` (the live line and the
heartbeat of long runs)."""
