"""The values a dispatch takes and returns (request, result tree, session state) and
:class:`SkillDispatcher`, the interface the run pipeline, repair and workflow phases
dispatch through."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from skillrt.dispatch.header import ExecutionMode, RuntimeHeader
from skillrt.errors import RunnerError, SkillrtError
from skillrt.execution.base import Runner, RunnerResult
from skillrt.execution.fallback import PathMachine, RoundLedger, Transition
from skillrt.execution.records import ExecutionRecorder
from skillrt.loading.reads import SkillReads
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    from skillrt.config import RuntimeConfig
    from skillrt.skills.registry import SkillRegistry

#: Told a dispatch's successful runner result before anything records it (a workflow
#: phase puts the reply in its memory file first, so a store that fails to record the
#: call loses no reply). It must not raise.
ResultHook = Callable[[RunnerResult], None]


@dataclass(frozen=True)
class DispatchRequest:
    """One dispatch, with the flags of seed 000 §8.

    ``depth`` is the *caller's* depth: a delegated request runs its skill at
    ``depth + 1`` (the seed's example, ``--depth 1 --parent-skill executing-plans``,
    gives the header ``depth: 2``). A root request is the outermost one: depth 0, no
    parent, nothing visited.
    """

    skill: str | None
    prompt: str
    role: str | None = None
    execution_mode: ExecutionMode = "root"
    depth: int = 0
    parent_skill: str | None = None
    edge_type: str = "requires_now"
    visited_skills: tuple[str, ...] = ()
    request_id: str | None = None
    #: Extra context for the prompt (a ``<context>`` section).
    context: str | None = None
    #: Follow ``requires_now`` edges; None = ``dispatch.follow_edges``.
    follow_edges: bool | None = None
    #: The run_skill delegation chain this request belongs to (001 §19).
    call_chain: tuple[str, ...] = ()


@dataclass(frozen=True)
class BlockedEdge:
    """A ``requires_now`` edge that was not followed, and why."""

    source: str | None
    target: str
    edge_type: str
    #: ``guard`` (error has the 000 §6 code), ``alternative_taken``,
    #: ``already_dispatched``, ``disabled``, ``model_invocation_disabled``, ``error``
    #: (the sub-skill could not be prepared, e.g. its body is refused by the loader).
    reason: str
    error: dict[str, Any] | None = None


@dataclass(frozen=True)
class DispatchResult:
    """The result tree of one dispatch (children are sub-skill dispatches)."""

    request_id: str
    execution_id: str | None
    skill: str | None
    role: str
    execution_mode: str
    depth: int
    edge_type: str | None
    path: str
    #: ``success`` or ``failed``.
    status: str
    output: str
    header: RuntimeHeader
    runner: str
    attempts: int
    prompt_chars: int
    latency_ms: float
    #: The assembled prompt; kept for dry runs (and when asked for).
    prompt: str | None = None
    exit_code: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    truncated: bool = False
    error: dict[str, Any] | None = None
    transitions: tuple[Transition, ...] = ()
    loads: tuple[dict[str, Any], ...] = ()
    children: tuple[DispatchResult, ...] = ()
    blocked: tuple[BlockedEdge, ...] = ()
    #: ``requires_later`` targets: what the skill says comes next (not run).
    later: tuple[str, ...] = ()
    delegations: tuple[RunSkillResult, ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "success"

    def walk(self) -> Iterator[DispatchResult]:
        """This result and every descendant, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()
        for d in self.delegations:
            if d.dispatch is not None:
                yield from d.dispatch.walk()


@dataclass(frozen=True)
class Prepared:
    """Everything before the runner call: the benchmarked part of a dispatch."""

    header: RuntimeHeader
    prompt: str
    skill: Skill | None
    role: str
    path: str
    edge_type: str | None
    loads: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class ReadyDispatch:
    """A request prepared to run (header, guards, prompt done), in its session: what
    :meth:`SkillDispatcher.run_ready` runs. ``prompt`` is exactly what the runner gets."""

    request: DispatchRequest
    session: DispatchSession
    prepared: Prepared

    @property
    def prompt(self) -> str:
        return self.prepared.prompt


@dataclass(frozen=True)
class RunSkillResult:
    """The structured result of 001 §19."""

    status: Literal["delegated", "error"]
    target_skill: str
    call_chain: tuple[str, ...]
    skill_file: str | None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    #: The dispatch tree behind ``result`` (None when refused before running).
    dispatch: DispatchResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "target_skill": self.target_skill,
            "call_chain": list(self.call_chain),
            "skill_file": self.skill_file,
        }
        if self.status == "delegated":
            out["result"] = self.result
        else:
            out["error"] = self.error
        if self.dispatch is not None:
            from skillrt.serialize import to_jsonable

            out["dispatch"] = to_jsonable(self.dispatch)
        return out


@dataclass
class DispatchSession:
    """What one outermost request shares: its id, what ran, budgets, the recorder, and
    the SKILL.md bodies it has read (each read once)."""

    request_id: str
    ledger: RoundLedger
    recorder: ExecutionRecorder
    reads: SkillReads
    visited: list[str] = field(default_factory=list)
    dispatched: set[tuple[str | None, int]] = field(default_factory=set)
    dispatch_count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def visit(self, skill: str) -> None:
        with self.lock:
            if skill not in self.visited:
                self.visited.append(skill)

    def visited_set(self) -> frozenset[str]:
        with self.lock:
            return frozenset(self.visited)

    def claim(self, skill: str | None, depth: int) -> bool:
        """Reserve the (skill, depth) pair; False when it was dispatched already."""
        with self.lock:
            key = (skill, depth)
            if key in self.dispatched:
                return False
            self.dispatched.add(key)
            self.dispatch_count += 1
            return True


def build_result(
    prepared: Prepared,
    session: DispatchSession,
    *,
    runner: str,
    keep_prompt: bool,
    execution_id: str | None,
    attempts: int,
    started: float,
    res: RunnerResult | None = None,
    error: SkillrtError | None = None,
    transitions: tuple[Transition, ...] = (),
    children: tuple[DispatchResult, ...] = (),
    blocked: tuple[BlockedEdge, ...] = (),
    later: tuple[str, ...] = (),
    delegations: tuple[RunSkillResult, ...] = (),
) -> DispatchResult:
    """The result node of a prepared dispatch: ``success`` with ``res``, else ``failed``."""
    header = prepared.header
    exit_code = res.exit_code if res is not None else None
    if res is None and isinstance(error, RunnerError) and error.exit_code is not None:
        exit_code = error.exit_code
    return DispatchResult(
        request_id=session.request_id,
        execution_id=execution_id,
        skill=prepared.skill.qualified_name if prepared.skill else None,
        role=prepared.role,
        execution_mode=header.execution_mode,
        depth=header.trace.depth,
        edge_type=prepared.edge_type,
        path=prepared.path,
        status="success" if res is not None else "failed",
        output=res.output if res is not None else "",
        header=header,
        runner=runner,
        attempts=attempts,
        prompt_chars=len(prepared.prompt),
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
        prompt=prepared.prompt if keep_prompt else None,
        exit_code=exit_code,
        tokens_in=res.tokens_in if res is not None else None,
        tokens_out=res.tokens_out if res is not None else None,
        truncated=res.truncated if res is not None else False,
        error=error.to_dict() if error is not None else None,
        transitions=transitions,
        loads=prepared.loads,
        children=children,
        blocked=blocked,
        later=later,
        delegations=delegations,
    )


class SkillDispatcher(Protocol):
    """What the run pipeline, repair and workflow phases need of a dispatcher.

    :class:`~skillrt.dispatch.dispatcher.Dispatcher` is the implementation; depending on
    this interface keeps ``execution`` and ``orchestration`` from importing it.
    """

    @property
    def registry(self) -> SkillRegistry: ...

    @property
    def config(self) -> RuntimeConfig: ...

    @property
    def runner(self) -> Runner: ...

    @property
    def environ(self) -> Mapping[str, str]: ...

    @property
    def run_id(self) -> str | None: ...

    def new_session(
        self,
        request_id: str | None = None,
        *,
        ledger: RoundLedger | None = None,
        reads: SkillReads | None = None,
    ) -> DispatchSession:
        """A new outermost request (its own budgets, recorder and reads)."""

    def prepare(
        self,
        request: DispatchRequest,
        session: DispatchSession,
        *,
        parent: RuntimeHeader | None = None,
        parent_output: str | None = None,
    ) -> Prepared:
        """Header, guards and prompt; raises a guard's error."""

    def ready(self, request: DispatchRequest) -> ReadyDispatch:
        """``request`` prepared in a new session of its own (raises a guard's error)."""

    def run_ready(
        self, ready: ReadyDispatch, *, on_result: ResultHook | None = None
    ) -> DispatchResult:
        """Run a prepared request with no fallback (its path machine ends in ``success``
        or ``exit``), following its edges; a failed run is a ``failed`` result.
        ``on_result`` is told the runner's result before anything records it."""

    def execute(
        self,
        prepared: Prepared,
        request: DispatchRequest,
        session: DispatchSession,
        *,
        parent_execution_id: str | None = None,
        fallback_used: bool = False,
        machine: PathMachine | None = None,
        on_result: ResultHook | None = None,
    ) -> tuple[DispatchResult, PathMachine]:
        """Run a prepared dispatch under its path machine, then follow its edges."""

    def attempt(
        self,
        prepared: Prepared,
        request: DispatchRequest,
        session: DispatchSession,
        *,
        execution_id: str,
        parent_execution_id: str | None = None,
        fallback_used: bool = False,
        on_result: ResultHook | None = None,
    ) -> RunnerResult:
        """One recorded runner call; raises on failure."""

    def finish(
        self,
        prepared: Prepared,
        request: DispatchRequest,
        session: DispatchSession,
        res: RunnerResult,
        *,
        execution_id: str | None,
        attempts: int,
        started: float,
    ) -> DispatchResult:
        """The result of a successful call, its sub-skills followed."""
