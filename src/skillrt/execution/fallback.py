"""The failure fallback state machine of seed 001 §10, with its transitions as data.

One :class:`PathMachine` per execution path (a skill, or the no-skill path)::

    selected -> running -> success
    running -> retryable_failure | fatal_failure
    retryable_failure -> running          (at most max_retry_per_path times)
    retryable_failure -> fallback
    fatal_failure -> fallback
    fallback -> success | exit

A path in ``fallback`` ends in ``success`` when a later path of the same step succeeds
(next-best skill, no-skill path, or a repair of this one), else in ``exit``. The
:class:`RoundLedger` holds what is shared across a round (one ``run``): consecutive
failures per path (two in a row ban the path for the round), the per-skill retry
budget (001 §13 ``max_total_retries_per_skill``) and the repair budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Generic, TypeVar

from skillrt.errors import IllegalTransition, RunnerError, SkillrtError, StoreError


class PathState(StrEnum):
    SELECTED = "selected"
    RUNNING = "running"
    SUCCESS = "success"
    RETRYABLE_FAILURE = "retryable_failure"
    FATAL_FAILURE = "fatal_failure"
    FALLBACK = "fallback"
    EXIT = "exit"


#: Seed 001 §10, exactly: state -> states it may move to.
FALLBACK_TRANSITIONS: Mapping[str, frozenset[str]] = {
    "selected": frozenset({"running"}),
    "running": frozenset({"success", "retryable_failure", "fatal_failure"}),
    "retryable_failure": frozenset({"running", "fallback"}),
    "fatal_failure": frozenset({"fallback"}),
    "fallback": frozenset({"success", "exit"}),
    "success": frozenset(),
    "exit": frozenset(),
}

NO_SKILL = "no-skill"
ASK_USER = "ask-user"


def skill_path(name: str) -> str:
    """The path id of a skill: ``skill:<qualified name>``."""
    return f"skill:{name}"


@dataclass(frozen=True)
class Transition:
    """One recorded move of a state machine."""

    machine: str
    path: str
    from_state: str
    to_state: str
    #: Which attempt of the path this belongs to (1-based).
    attempt: int
    reason: str
    error_code: str | None = None
    at: float = 0.0


TransitionSink = Callable[[Transition], None]


class StateMachine:
    """A table-driven state machine that records every transition."""

    def __init__(
        self,
        machine: str,
        table: Mapping[str, frozenset[str]],
        initial: str,
        path: str,
        *,
        sink: TransitionSink | None = None,
    ) -> None:
        if initial not in table:
            raise IllegalTransition(f"unknown initial state {initial!r}", machine=machine)
        self.machine = machine
        self.table = table
        self.state = initial
        self.path = path
        self.attempt = 1
        self.transitions: list[Transition] = []
        self._sink = sink

    def can(self, to: str) -> bool:
        return to in self.table.get(self.state, frozenset())

    def advance(
        self, to: str | Enum, reason: str = "", *, error_code: str | None = None
    ) -> Transition:
        """Move to ``to``; an illegal move raises :class:`IllegalTransition`."""
        target = to.value if isinstance(to, Enum) else to
        if target not in self.table:
            raise IllegalTransition(
                f"{self.machine}: unknown state {target!r}",
                machine=self.machine,
                path=self.path,
                from_state=self.state,
                to_state=target,
            )
        if not self.can(target):
            raise IllegalTransition(
                f"{self.machine}: {self.state} -> {target} is not allowed "
                f"(allowed: {', '.join(sorted(self.table[self.state])) or 'none'})",
                machine=self.machine,
                path=self.path,
                from_state=self.state,
                to_state=target,
            )
        t = Transition(
            self.machine,
            self.path,
            self.state,
            target,
            self.attempt,
            reason,
            error_code,
            time.time(),
        )
        self.state = target
        self.transitions.append(t)
        if self._sink is not None:
            self._sink(t)
        return t

    @property
    def terminal(self) -> bool:
        return not self.table.get(self.state)


class PathMachine(StateMachine):
    """The 001 §10 machine for one path."""

    def __init__(self, path: str, *, sink: TransitionSink | None = None) -> None:
        super().__init__("fallback", FALLBACK_TRANSITIONS, "selected", path, sink=sink)


class RoundLedger:
    """Budgets and bans shared by every path of one round (thread-safe)."""

    def __init__(
        self,
        *,
        max_retry_per_path: int = 1,
        max_total_retries_per_skill: int = 2,
        max_repair_attempts_per_run: int = 2,
        ban_after: int = 2,
    ) -> None:
        self.max_retry_per_path = max_retry_per_path
        self.max_total_retries_per_skill = max_total_retries_per_skill
        self.max_repair_attempts_per_run = max_repair_attempts_per_run
        self.ban_after = ban_after
        self._consecutive: dict[str, int] = {}
        self._banned: set[str] = set()
        self._retries: dict[str, int] = {}
        self._repairs = 0
        self._lock = threading.Lock()

    def record_failure(self, path: str) -> bool:
        """Count a failure; returns True when this one bans the path."""
        with self._lock:
            n = self._consecutive.get(path, 0) + 1
            self._consecutive[path] = n
            if n >= self.ban_after and path not in self._banned:
                self._banned.add(path)
                return True
            return False

    def record_success(self, path: str) -> None:
        with self._lock:
            self._consecutive[path] = 0

    def banned(self, path: str) -> bool:
        with self._lock:
            return path in self._banned

    @property
    def banned_paths(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(sorted(self._banned))

    def take_retry(self, key: str) -> bool:
        """Use one retry of ``key``'s budget (a skill path); False when spent."""
        with self._lock:
            used = self._retries.get(key, 0)
            if used >= self.max_total_retries_per_skill:
                return False
            self._retries[key] = used + 1
            return True

    def retries_used(self, key: str) -> int:
        with self._lock:
            return self._retries.get(key, 0)

    def take_repair(self) -> bool:
        with self._lock:
            if self._repairs >= self.max_repair_attempts_per_run:
                return False
            self._repairs += 1
            return True

    @property
    def repairs_used(self) -> int:
        with self._lock:
            return self._repairs


T = TypeVar("T")


@dataclass(frozen=True)
class PathRun(Generic[T]):
    """How one path's attempts ended: a value, or the last error (machine left in a
    failure state for the caller to move to ``fallback``)."""

    ok: bool
    value: T | None
    error: SkillrtError | None
    attempts: int
    banned: bool = False


def run_path(
    machine: PathMachine,
    attempt: Callable[[int], T],
    ledger: RoundLedger,
) -> PathRun[T]:
    """Drive ``machine`` from ``selected`` through its attempts.

    ``attempt(n)`` runs the path once (n = 1, 2, ...) and raises a
    :class:`~skillrt.errors.SkillrtError` on failure. A retryable failure is retried
    while the path's retries (``max_retry_per_path``), the ledger's per-skill budget
    and the ban rule allow it; anything else stops the path. A :class:`StoreError` (the
    state store cannot record the attempt) is not the path's failure: it propagates, and
    the machine stays ``running`` for the caller to resume.
    """
    machine.advance(PathState.RUNNING, "selected path started")
    retries = 0
    while True:
        try:
            value = attempt(machine.attempt)
        except StoreError:
            raise
        except SkillrtError as exc:
            banned = ledger.record_failure(machine.path)
            retryable = isinstance(exc, RunnerError) and exc.retryable
            if not retryable:
                machine.advance(PathState.FATAL_FAILURE, exc.message, error_code=exc.code)
                return PathRun(False, None, exc, machine.attempt, banned)
            machine.advance(PathState.RETRYABLE_FAILURE, exc.message, error_code=exc.code)
            if (
                retries < ledger.max_retry_per_path
                and not ledger.banned(machine.path)
                and ledger.take_retry(machine.path)
            ):
                retries += 1
                machine.attempt += 1
                machine.advance(PathState.RUNNING, f"retry {retries} of a retryable failure")
                continue
            return PathRun(False, None, exc, machine.attempt, banned or ledger.banned(machine.path))
        ledger.record_success(machine.path)
        machine.advance(PathState.SUCCESS, "path succeeded")
        return PathRun(True, value, None, machine.attempt)
