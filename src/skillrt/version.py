"""The version of the installed skillrt (``skillrt.__version__``, ``skillrt --version``,
the MCP handshake, telemetry spans), read once a process by whoever needs it.

Only this module's importers pay for reading it; it imports nothing of skillrt, so a
module anywhere in the package may take it without importing the package's face.
"""

from __future__ import annotations

__all__ = ["__version__", "installed_version"]


def installed_version() -> str:
    """The installed distribution's version: read from its ``*.dist-info/METADATA`` on
    ``sys.path`` (importlib.metadata costs ~40-90 ms to import, more than a whole MCP
    handshake should take), else through importlib.metadata."""
    import os
    import sys

    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("skillrt-") and name.endswith(".dist-info"):
                try:
                    with open(os.path.join(entry, name, "METADATA"), encoding="utf-8") as fh:
                        for line in fh:
                            if line.startswith("Version:"):
                                return line.split(":", 1)[1].strip()
                            if not line.strip():
                                break
                except OSError:
                    continue
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("skillrt")
    except PackageNotFoundError:  # running from a source tree
        return "0.0.0+src"


__version__: str = installed_version()
