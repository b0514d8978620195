"""Talking to a warm skillrt daemon (``skillrt serve``): the registry, router index and
model stay loaded, and prompt hooks, the CLI and the doctor ask it over a Unix socket
(or loopback TCP).

:mod:`skillrt.daemon.protocol` (the wire format, where a daemon is found) and
:mod:`skillrt.daemon.client` import only the standard library (a prompt hook starts
once per prompt). The server, which imports the runtime, is :mod:`skillrt.serve.daemon`:
this package sits below every stage that asks a daemon, and imports nothing on its own.
"""
