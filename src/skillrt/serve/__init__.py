"""``skillrt serve``: the daemon that keeps the registry, router index and model warm
and answers prompt hooks, the CLI and other processes over a Unix socket (or loopback
TCP).

:mod:`skillrt.serve.daemon` serves a :class:`~skillrt.mcp.service.SkillService` (so it
sits above the runtime, beside the MCP server); :mod:`skillrt.serve.limits` holds the
state folder's lock for the daemon's life and caps its connections. How to talk to it
(the wire protocol and the client, standard library only) is :mod:`skillrt.daemon`.
This package imports nothing on its own.
"""
