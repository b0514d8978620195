"""Execution rows: a store that cannot take a skill's stats never fails the run, but a
bug in the stats code is not hidden as a log line."""

from __future__ import annotations

import pytest

from skillrt.errors import StoreUnavailable
from skillrt.execution.records import ExecutionRecorder, ExecutionRow, list_executions
from skillrt.store import MEMORY, open_location


def _row(n: int) -> ExecutionRow:
    return ExecutionRow(f"exe-{n}", "req-1", "code-review", "fixer", "root", 0, "skill:x",
                        "command", "success", 1.0)  # fmt: skip


def test_stats_the_store_refuses_are_logged_and_a_bug_raises(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = open_location(MEMORY)

    def unreachable(*_: object, **__: object) -> None:
        raise StoreUnavailable("the server went away", retryable=True)

    with caplog.at_level("WARNING"):
        ExecutionRecorder(store, stats_hook=unreachable).execution(_row(1), count_stats=True)
    assert "recording stats for code-review failed" in caplog.text
    assert [r["execution_id"] for r in list_executions(store)] == ["exe-1"]

    def bug(*_: object, **__: object) -> None:
        raise AttributeError("a bug in the stats code")

    with pytest.raises(AttributeError, match="a bug"):
        ExecutionRecorder(store, stats_hook=bug).execution(_row(2), count_stats=True)
    store.close()
