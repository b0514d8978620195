"""A warm skillrt daemon: the registry, router index and model stay loaded, and prompt
hooks, the CLI and other processes ask it over a Unix socket (or loopback TCP).

:mod:`skillrt.daemon.protocol` and :mod:`skillrt.daemon.client` import only the standard
library (a prompt hook starts once per prompt); :mod:`skillrt.daemon.server` holds the
server and imports the runtime. This package imports nothing on its own.
"""
