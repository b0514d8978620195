"""The prompt hook's time budget, defined once: :class:`~skillrt.config.HookConfig`
takes its defaults from here, and so does the hook itself (:mod:`skillrt.hooks.entry`),
which must not import the config module on its fast path (about 30 ms a prompt: the
daemon round trip is less). It is a module of its own, below the config, so the config
never imports a surface.
"""

__all__ = [
    "DAEMON_IDLE_S",
    "DAEMON_SHARE",
    "DAEMON_START_TIMEOUT_S",
    "DEADLINE_S",
    "STORE_WAIT_S",
]

#: ``hook.deadline_s``: seconds the hook may take all told.
DEADLINE_S = 3.0
#: The share of the deadline the daemon's answer is waited for, unless
#: ``hook.daemon_timeout_s`` says otherwise.
DAEMON_SHARE = 1 / 3
#: ``hook.store_wait_s``: seconds the in-process work waits on a shared store, all told.
STORE_WAIT_S = 0.5
#: ``hook.daemon_idle_s``: a daemon the hook started stops after this long unasked.
DAEMON_IDLE_S = 900.0
#: ``hook.daemon_start_timeout_s``: its longest load of the skills and the index.
DAEMON_START_TIMEOUT_S = 600.0
#: ``hook.daemon_start_delay_s``: how long a daemon the hook started waits before that
#: load, so that the client's turn in progress has the cores (a Node client spends ~1 s
#: of CPU on a prompt after the hook answers).
DAEMON_START_DELAY_S = 2.0
#: The longest start delay ``hook.daemon_start_delay_s`` and ``serve --start-delay`` take.
MAX_START_DELAY_S = 60.0
