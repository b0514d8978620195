"""Prompt hooks for coding agents (Claude Code, Codex CLI, Gemini CLI): the right skill in
the model's context on every prompt.

``skillrt hook <client>`` runs once per prompt, so :mod:`skillrt.hooks.entry`,
:mod:`skillrt.hooks.transcript` and :mod:`skillrt.hooks.clients` import only the standard
library and :mod:`skillrt.daemon.client`; the runtime is imported only when no daemon
answers. This package imports nothing on its own.
"""
