"""The MCP server's behaviour, without the MCP SDK: tools, resources, hot reload.

:class:`SkillService` wraps a :class:`~skillrt.runtime.SkillRuntime`. Every method is
synchronous and thread-safe (the server runs them in worker threads): requests share
the runtime under a read lock, a reload swaps the registry under the write lock. Tool
calls never raise for bad input: they return a :class:`ToolOutcome` whose error text is
the structured ``{"code", "message", ...}`` JSON every other surface prints.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillrt.config import McpConfig
from skillrt.errors import (
    FeatureUnavailable,
    InternalError,
    ModelInvocationDisabled,
    SkillDisabled,
    SkillrtError,
    UsageError,
)
from skillrt.mcp.files import DigestCache, mime_type, read_skill_file
from skillrt.mcp.publish import (
    META_PREFIX,
    TTL_MS,
    FrontmatterCache,
    Publication,
    ResourceInfo,
    activatable_names,
    build_publication,
    instructions_for,
    skill_entry,
)
from skillrt.mcp.rwlock import RWLock
from skillrt.mcp.tools import TOOL_ALIASES, ToolSpec, check_arguments, tool_specs
from skillrt.mcp.uris import INDEX_URI, SKILL_FILE, parse_skill_uri, skill_uri
from skillrt.mcp.watch import roots_fingerprint
from skillrt.serialize import to_jsonable
from skillrt.skills.model import Skill
from skillrt.telemetry.otel import span

if TYPE_CHECKING:
    from pathlib import Path

    from skillrt.routing.plan import RouteResult
    from skillrt.runtime import SkillRuntime
    from skillrt.telemetry.writer import RouteEventWriter
    from skillrt.turns import TurnContext

log = logging.getLogger("skillrt.mcp")

#: Tools that may run for minutes (a delegated runner call): they do not hold the
#: read lock, so a hot reload never waits for them, and nothing waits behind that
#: reload. They are safe without it: the runtime swaps registries atomically.
UNLOCKED_TOOLS = frozenset({"run_skill"})
#: The longest a route waits for the router's index built beside the session (a first
#: embedding of a large catalogue takes minutes; a route would take as long).
ROUTER_WAIT_S = 600.0
#: Tools that read a skill's files and never the router: served while its index is
#: still being built (the others wait for it).
FILE_TOOLS = frozenset({"load_skill", "read_skill_resource"})
#: Page sizes of resources/list and skills/list.
RESOURCES_PAGE = 500
SKILLS_PAGE = 100


@dataclass(frozen=True)
class ToolOutcome:
    """A tool's answer: text for the model, JSON data for programs, the error flag."""

    text: str
    data: dict[str, Any]
    is_error: bool = False


@dataclass(frozen=True)
class ResourceContent:
    uri: str
    text: str
    mime_type: str
    meta: dict[str, Any]


@dataclass(frozen=True)
class Changes:
    """What a reload changed: which list-changed notifications to send."""

    tools: bool
    resources: bool
    instructions: bool

    @property
    def any(self) -> bool:
        return self.tools or self.resources or self.instructions


#: Candidates named in the text of a route_skills answer (all are in the structured data).
SUMMARY_CANDIDATES = 5


def route_summary(data: dict[str, Any]) -> dict[str, Any]:
    """What the model reads from a route: the plan, why, and the runners-up.

    The full result (every candidate with its six score terms) stays in the
    structured content; the text keeps a model's context small.
    """
    plan = data.get("plan") or {}
    return {
        "route_id": data.get("route_id"),
        "skills": [s.get("name") for s in plan.get("skills", [])],
        "primary": plan.get("primary"),
        "groups": plan.get("groups", []),
        "routing_reason": data.get("routing_reason"),
        "fallback_path": plan.get("fallback_path", []),
        "candidates": [
            {
                "name": c.get("name"),
                "score": (c.get("score") or {}).get("total"),
                "status": c.get("status"),
            }
            for c in data.get("candidates", [])[:SUMMARY_CANDIDATES]
        ],
        # Skills the plan leaves out for the model to weigh (never a body): loaded here
        # through load_skill, the client's own skill tool.
        "pointers": [
            {
                "name": p.get("name"),
                "why": p.get("why"),
                "load": f"call load_skill with name {p.get('name')!r} if it fits",
            }
            for p in data.get("pointers", [])
        ],
        "next": _next_step(bool(plan.get("skills")), bool(data.get("pointers"))),
    }


def _next_step(skills: bool, pointers: bool) -> str:
    """What the model does with a route summary."""
    if skills:
        return "call load_skill for each skill, in order"
    if pointers:
        return "no skill is needed for sure: answer, loading a pointed-to skill only if it fits"
    return "no skill fits: answer without one"


def error_outcome(err: SkillrtError) -> ToolOutcome:
    payload = err.to_dict()
    return ToolOutcome(json.dumps(payload, ensure_ascii=False), {"error": payload}, True)


def _json_outcome(data: Any) -> ToolOutcome:
    jsonable = to_jsonable(data)
    if not isinstance(jsonable, dict):
        jsonable = {"result": jsonable}
    return ToolOutcome(json.dumps(jsonable, ensure_ascii=False), jsonable)


class SkillService:
    """Tools, resources and hot reload over one runtime.

    Args:
        runtime: The runtime to serve (its store receives route telemetry).
        config: MCP settings; defaults to ``runtime.config.mcp``.
    """

    def __init__(
        self,
        runtime: SkillRuntime,
        config: McpConfig | None = None,
        *,
        events: RouteEventWriter | None = None,
        surface: str = "mcp",
    ) -> None:
        self.runtime = runtime
        #: The surface routes are recorded under (``mcp``, ``daemon``, ``pydantic-ai``, ...).
        self.surface = surface
        self.config = config or runtime.config.mcp
        #: Route events are written by this background writer (the route never waits on
        #: the store); None lets the runtime record them itself, synchronously.
        self.events = events
        self._lock = RWLock()
        self._digests = DigestCache()
        self._frontmatter = FrontmatterCache()
        self._publication: Publication | None = None
        #: The usage counts the early instructions were made from (the first snapshot
        #: takes them over).
        self._early_usage: dict[str, int] | None = None
        self._fingerprint: str | None = None
        self._tools: tuple[Publication, list[ToolSpec]] | None = None
        self._warmed = False
        #: Clear while the router's index is built on a thread of its own (a route
        #: waits for it rather than building a second one beside it).
        self._router_ready = threading.Event()
        self._router_ready.set()
        self._handlers: dict[str, Callable[[dict[str, Any]], ToolOutcome]] = {
            "route_skills": self._route_skills,
            "load_skill": self._load_skill,
            "read_skill_resource": self._read_skill_resource,
            "resolve_mentions": self._resolve_mentions,
            "run_skill": self._run_skill,
        }
        self.reloads = 0

    # -- snapshot and hot reload ---------------------------------------------------------
    def _roots(self) -> list[Path]:
        from skillrt.skills.discovery import resolve_roots

        roots = resolve_roots(
            self.runtime.config.discovery,
            self.runtime.config.project_dir,
            self.runtime.explicit_roots,
        )
        return [r.path for r in roots]

    def fingerprint(self) -> str | None:
        return roots_fingerprint(self._roots(), self.runtime.config.discovery, self.runtime.store)

    def start(self, *, warm: bool = False) -> Publication:
        """Discover the skills and build the first snapshot (call before serving).

        ``warm`` also builds the router's index now (embedding the catalogue, or reading
        it from the vector cache), so the first client's route is not the slow one.
        """
        with self._lock.write():
            self._mark_roots()
            self._publication = self._build()
            if warm:
                self._warm()
            self._warmed = warm
        return self._publication

    def _mark_roots(self) -> None:
        """Fingerprint the roots before the registry is first read (by the early answers
        or the first snapshot): a skill added in between then shows as a change to
        reload, never as one already seen."""
        if self._fingerprint is None:
            self._fingerprint = self.fingerprint()

    def warm_in_background(self) -> threading.Thread:
        """Build the router's index on a thread of its own, so the server answers the
        listing requests (a client's first turn waits for its tools) while the index is
        built; a route meanwhile waits for it (:meth:`_ready_router`), a reload until
        it is done."""
        self._router_ready.clear()

        def run() -> None:
            try:
                with self._lock.read():
                    self._warm()
                    self._warmed = True
            finally:
                self._router_ready.set()

        thread = threading.Thread(target=run, name="skillrt-mcp-warm", daemon=True)
        thread.start()
        return thread

    def _ready_router(self) -> None:
        """Wait for a router index being built in the background: what a route would
        otherwise build itself. The build ends, or fails, and sets the event either way;
        past :data:`ROUTER_WAIT_S` the route goes on and builds what it needs itself."""
        if not self._router_ready.wait(ROUTER_WAIT_S):
            log.warning("the router's index is still being built after %g s; routing "
                        "without waiting for it", ROUTER_WAIT_S)  # fmt: skip

    def _warm(self) -> None:
        """Route once without recording, so the router index exists before requests."""
        if not callable(getattr(self.runtime, "route", None)):
            return
        try:
            self._require("route")("warm up the skill router", surface="mcp", record=False)
            router = getattr(self.runtime, "router", None)
            tokens = getattr(getattr(router, "index", None), "tokens", None)
            if tokens is not None:
                tokens.preload()  # a server reads token states once, not per route
        except Exception:  # a warm-up failure must not stop the server; requests report it
            log.warning("router warm-up failed", exc_info=True)

    @property
    def started(self) -> bool:
        """Whether the first snapshot is built."""
        return self._publication is not None

    @property
    def publication(self) -> Publication:
        pub = self._publication
        if pub is None:
            return self.start()
        return pub

    def _build(self) -> Publication:
        usage, self._early_usage = self._early_usage, None
        if usage is None:
            usage = self._usage()
        return build_publication(self.runtime, self.config, self._digests, usage=usage)

    def _usage(self) -> dict[str, int]:
        """Times each skill was selected (the catalogue drops the least-used first)."""
        try:
            from skillrt.store.counters import skill_stats

            return {name: st.selections for name, st in skill_stats(self.runtime.store).items()}
        except (ImportError, SkillrtError):
            return {}

    def check_for_changes(self) -> Changes | None:
        """Re-fingerprint the roots; on a change reload and say what changed.

        Cheap when nothing changed (stats only). Returns None when nothing did.
        """
        fp = self.fingerprint()
        if fp is None or fp == self._fingerprint:
            return None  # None: the enable state cannot be read now; keep what is loaded
        return self.reload(fp)

    def reload(self, fingerprint: str | None = None) -> Changes:
        """Re-discover the skills now and swap the snapshot."""
        fp = fingerprint or self.fingerprint()
        old = self._publication
        with self._lock.write():
            self.runtime.refresh()
            new = self._build()
            self._publication = new
            self._fingerprint = fp
            self.reloads += 1
            if self._warmed:
                self._warm()  # rebuild the router index before requests resume
        if old is None:
            return Changes(True, True, True)
        changes = Changes(
            tools=old.tools_key != new.tools_key,
            resources=old.resources_key != new.resources_key,
            instructions=old.instructions != new.instructions,
        )
        log.info(
            "skills reloaded (%d published; tools changed: %s, resources changed: %s)",
            len(new.skills),
            changes.tools,
            changes.resources,
        )
        return changes

    # -- tools ----------------------------------------------------------------------------
    def tools(self) -> list[ToolSpec]:
        """The tool specs of the current snapshot (built once per snapshot)."""
        pub = self.publication
        cached = self._tools
        if cached is None or cached[0] is not pub:
            cached = (pub, tool_specs(pub.activatable))
            self._tools = cached
        return cached[1]

    def early_tools(self) -> list[ToolSpec]:
        """The tool specs before the snapshot is built: from the registry alone (the
        snapshot's own are the same, from the same registry), for a ``tools/list``
        answered while the skills' files are still to be listed."""
        if self._publication is not None:
            return self.tools()
        self._mark_roots()
        return tool_specs(activatable_names(self.runtime.registry.enabled_skills()))

    @property
    def instructions(self) -> str:
        return self.publication.instructions

    def early_instructions(self) -> str:
        """The instructions, before the snapshot is built: what ``initialize`` answers
        while the skills' files are still to be listed (the snapshot's own are the
        same text, from the same registry)."""
        if self._publication is not None:
            return self._publication.instructions
        self._mark_roots()
        # The snapshot built next reuses these counts: read twice, a route recorded
        # in between could change which descriptions fit, and the text with them.
        self._early_usage = self._usage()
        return instructions_for(self.runtime, self.config, usage=self._early_usage)[0]

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None) -> ToolOutcome:
        """Run one tool; every failure becomes an error outcome, never an exception."""
        try:
            name = TOOL_ALIASES.get(name, name)
            spec = next((t for t in self.tools() if t.name == name), None)
            if spec is None:
                known = ", ".join(sorted(self._handlers))
                raise UsageError(f"unknown tool '{name}' (tools: {known})", tool=name)
            args = check_arguments(spec, arguments)
            if name in UNLOCKED_TOOLS:
                return self._handlers[name](args)
            if name not in FILE_TOOLS:
                # Before the lock, never under it: a reload queued meanwhile would wait
                # for this reader, and the warm-up thread for the reload.
                self._ready_router()
            with self._lock.read():
                return self._handlers[name](args)
        except SkillrtError as err:
            return error_outcome(err)
        except Exception as exc:  # one bad request fails alone, never the server
            log.exception("tool %s failed", name)
            return error_outcome(InternalError(f"{type(exc).__name__}: {exc}", tool=name))

    def skill(self, name: str, *, for_model: bool) -> Skill:
        """The enabled skill ``name``; ``for_model`` also refuses a
        ``disable-model-invocation`` one (a model may not activate it)."""
        registry = self.runtime.registry
        skill = registry.get(name)
        if not registry.is_enabled(skill):
            raise SkillDisabled(
                f"Skill '{skill.qualified_name}' is disabled; enable it with "
                f"`skillrt enable {skill.qualified_name}`",
                name=skill.qualified_name,
            )
        if for_model and skill.disable_model_invocation:
            from skillrt.invocation.messages import model_invocation_disabled

            raise ModelInvocationDisabled(
                model_invocation_disabled(skill.qualified_name), name=skill.qualified_name
            )
        return skill

    def _require(self, method: str) -> Callable[..., Any]:
        fn = getattr(self.runtime, method, None)
        if not callable(fn):
            raise FeatureUnavailable(
                f"this skillrt build has no SkillRuntime.{method}()", method=method
            )
        return fn  # type: ignore[no-any-return]

    def route(
        self,
        query: str,
        *,
        surface: str | None = None,
        history: Sequence[str | Mapping[str, Any]] | None = None,
        top_k: int | None = None,
        candidates: Sequence[str] | None = None,
        explain: bool = False,
    ) -> RouteResult:
        """Route through the runtime; the T1 event goes to the background writer (the
        route never waits on the store), or is recorded by the runtime when there is none."""
        route = self._require("route")
        self._ready_router()
        surface = surface or self.surface
        kwargs: dict[str, Any] = {
            "history": history,
            "top_k": top_k,
            "candidates": candidates,
            "explain": explain,
            "surface": surface,
        }
        if self.events is None:
            result: RouteResult = route(query, **kwargs)
            return result
        result = route(query, record=False, **kwargs)
        self.record(result, surface=surface)
        return result

    def turn_context(
        self,
        prompt: str,
        *,
        history: Sequence[str | Mapping[str, Any]] | None = None,
        surface: str | None = None,
        budget: int | None = None,
        loaded: Collection[str] = (),
        client: str | None = None,
    ) -> TurnContext:
        """:meth:`SkillRuntime.turn_context`, its route recorded like :meth:`route`'s."""
        surface = surface or self.surface
        ctx: TurnContext = self._require("turn_context")(
            prompt,
            history=history,
            surface=surface,
            budget=budget,
            record=False if self.events is not None else None,
            loaded=loaded,
            client=client,
        )
        if ctx._route is not None:
            self.record(ctx._route, surface=surface)
        return ctx

    def record(self, result: RouteResult, *, surface: str) -> None:
        """Queue ``result``'s T1 event on the background writer (when there is one)."""
        if self.events is not None:
            self.events.submit(result, surface=surface, model_id=self._model_id())

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the read lock: a reload waits until the block is done."""
        with self._lock.read():
            yield

    def _route_skills(self, args: dict[str, Any]) -> ToolOutcome:
        result = self.route(args["query"])
        data = to_jsonable(result)
        return ToolOutcome(json.dumps(route_summary(data), ensure_ascii=False), data)

    def _model_id(self) -> str | None:
        router = getattr(self.runtime, "router", None)
        index = getattr(router, "index", None)
        model_id = getattr(index, "model_id", None)
        return model_id if isinstance(model_id, str) else None

    def _load_skill(self, args: dict[str, Any]) -> ToolOutcome:
        skill = self.skill(args["name"], for_model=True)
        load_body = self._require("load_body")
        result = load_body(skill.qualified_name)  # the runtime opens the skillrt.load span
        data = {
            "name": skill.qualified_name,
            "uri": skill_uri(skill.qualified_name),
            "description": skill.description,
            "allowed_tools": list(skill.allowed_tools),
            "text": result.text,
            "report": to_jsonable(result.report),
        }
        return ToolOutcome(result.text, data)

    def _read_skill_resource(self, args: dict[str, Any]) -> ToolOutcome:
        skill = self.skill(args["name"], for_model=False)
        read_resource = self._require("read_resource")
        path, section = args["path"], args.get("section")
        result = read_resource(skill.qualified_name, path, section)
        data = {
            "name": skill.qualified_name,
            "path": path,
            "uri": skill_uri(skill.qualified_name, path),
            "text": result.text,
            "report": to_jsonable(result.report),
        }
        return ToolOutcome(result.text, data)

    def _resolve_mentions(self, args: dict[str, Any]) -> ToolOutcome:
        resolve = self._require("resolve")
        resolution = resolve(args["text"], surface="user")
        return _json_outcome(resolution)

    def _run_skill(self, args: dict[str, Any]) -> ToolOutcome:
        run_skill = self._require("run_skill")
        result = run_skill(args["skill"], args["task"])  # spanned as skillrt.dispatch
        outcome = _json_outcome(result)
        error = outcome.data.get("error")
        if outcome.data.get("status") == "error" and isinstance(error, dict):
            # Refused (missing skill, depth, cycle): the structured error first, then
            # where it happened, as every other tool error.
            payload = {**error, **{k: v for k, v in outcome.data.items() if k != "error"}}
            return ToolOutcome(json.dumps(payload, ensure_ascii=False), outcome.data, True)
        return outcome

    # -- resources ------------------------------------------------------------------------
    def list_resources(self, cursor: str | None = None) -> tuple[list[ResourceInfo], str | None]:
        items = self.publication.resources()
        return _page(items, cursor, RESOURCES_PAGE)

    def read_resource(self, uri: str) -> ResourceContent:
        """A ``skill://`` resource's whole text, through the loader's path jail.

        Raises SkillrtError subclasses (the server maps them to JSON-RPC errors).
        """
        pub = self.publication
        if uri == INDEX_URI:
            return ResourceContent(
                uri, json.dumps(pub.index(), ensure_ascii=False), "application/json", {}
            )
        # Every known skill, so a disabled one answers SkillDisabled, not "no such skill".
        ref = parse_skill_uri(uri, pub.known)
        with self._lock.read():
            skill = self.skill(ref.qualified_name, for_model=False)
            attrs = {
                "skillrt.kind": "resource",
                "skillrt.skill": skill.qualified_name,
                "skillrt.path": ref.path,
            }
            with span("skillrt.load", attrs, enabled=self.runtime.config.telemetry.otel):
                text, sha = read_skill_file(skill.path, ref.path, self.runtime.config.limits)
        mime = "text/markdown" if ref.path == SKILL_FILE else mime_type(ref.path)
        return ResourceContent(uri, text, mime, {f"{META_PREFIX}sha256": sha})

    # -- skills extension (SEP-2640) ------------------------------------------------------
    def skills_list(self, cursor: str | None = None) -> dict[str, Any]:
        pub = self.publication
        page, next_cursor = _page(list(pub.skills), cursor, SKILLS_PAGE)
        out: dict[str, Any] = {
            "resultType": "complete",
            "skills": [skill_entry(p, self._frontmatter) for p in page],
            "ttlMs": TTL_MS,
            "cacheScope": "private",
        }
        if next_cursor is not None:
            out["nextCursor"] = next_cursor
        return out

    def skills_get(self, uri: str) -> dict[str, Any]:
        pub = self.publication
        ref = parse_skill_uri(uri, pub.names)
        p = pub.get(ref.qualified_name)
        if p is None or ref.path != SKILL_FILE:
            raise UsageError(f"{uri!r} is not the SKILL.md of a skill this server serves", uri=uri)
        return {
            "resultType": "complete",
            "skill": skill_entry(p, self._frontmatter),
            "ttlMs": TTL_MS,
            "cacheScope": "private",
        }


def _page(items: list[Any], cursor: str | None, size: int) -> tuple[list[Any], str | None]:
    start = 0
    if cursor:
        try:
            start = int(cursor)
        except ValueError:
            raise UsageError(f"invalid cursor {cursor!r}", cursor=cursor) from None
        if start < 0:
            raise UsageError(f"invalid cursor {cursor!r}", cursor=cursor)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)
