"""The throwaway PostgreSQL cluster's processes, for tests that stop or freeze it."""

from __future__ import annotations

import os
from pathlib import Path


def postmaster_pid(folder: str) -> int:
    """The postmaster of the cluster under ``folder`` (``.ci/postgres.sh``'s layout)."""
    return int((Path(folder) / "data" / "postmaster.pid").read_text().split()[0])


def child_pids(parent: int) -> list[int]:
    """The processes ``parent`` started (a postmaster's backends), from ``/proc``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = (Path("/proc") / entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry))
    return found
