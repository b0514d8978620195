"""``SkillRuntime``: the one object that wires config, store, registry and the stages.

The CLI and the MCP server only call this facade. Every stage is built lazily, so a
caller that only lists skills never imports the router or an embedding model. The
facade is the only place that wires stages: each service gets the narrow collaborators
it uses (the registry, a resolver, a recording router, the store), never the facade,
and each operation's options are declared once, next to the service that takes them.
"""

from __future__ import annotations

import builtins
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from skillrt.config import LoaderLimits, RootConfig, RuntimeConfig
from skillrt.skills.catalog import Catalog, render_catalog
from skillrt.skills.checks import ValidationResult, validate_paths
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillEntry, SkillRegistry
from skillrt.store import Store, open_store

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillrt.dispatch.edges import SkillEdge
    from skillrt.dispatch.model import (
        DispatchRequest,
        DispatchResult,
        RunSkillResult,
        SkillDispatcher,
    )
    from skillrt.dispatch.pipeline import RunResult
    from skillrt.dispatch.rules import RoutingRules
    from skillrt.dispatch.service import DispatchOptions, DispatchService, OrchestrateResult
    from skillrt.doctor.commands import CommandLine
    from skillrt.doctor.model import DoctorReport
    from skillrt.eval.datasets import LabelledQuery
    from skillrt.eval.harness import EvalReport
    from skillrt.execution.base import Runner
    from skillrt.execution.options import RunnerOptions
    from skillrt.invocation.resolver import InvocationResolver
    from skillrt.invocation.results import CommandOutcome, Completion, Resolution, Surface
    from skillrt.loading.report import LoadResult
    from skillrt.orchestration.agents import PhaseAgents
    from skillrt.orchestration.domains import DomainClassifier
    from skillrt.orchestration.events import Observer
    from skillrt.orchestration.service import ResumeOptions, StartOptions, Workflows
    from skillrt.orchestration.status import RunSummary, WorkflowStatus
    from skillrt.routing.plan import RouteResult
    from skillrt.routing.router import Router
    from skillrt.routing.why_not import WhyNot
    from skillrt.telemetry.feedback import Feedback
    from skillrt.telemetry.metrics import StatsReport
    from skillrt.telemetry.recording import RouteRecorder
    from skillrt.turns import TurnContext, TurnSources


class SkillRuntime:
    """A skill runtime over a config, a state store and the skills it finds.

    Args:
        config: Runtime configuration; defaults work with no file at all.
        roots: When given, only these roots are searched (like the CLI's ``--root``).
        store: A state store; by default the one the config names (``state.url`` on
            PostgreSQL, else ``<state_dir>/state.db``). Pass ``persist=False`` for an
            in-memory store (nothing written to disk).
        catalogs: JSONL skill catalogues to route over besides the roots' skills.
        catalog_base: The folder a catalogue line's ``path`` is relative to (default: each
            catalogue's own folder).
        env: Environment for prerequisite checks (``env`` items); None skips them.
    """

    def __init__(
        self,
        config: RuntimeConfig | None = None,
        *,
        roots: Sequence[Path | str | RootConfig] | None = None,
        store: Store | None = None,
        persist: bool = True,
        catalogs: Sequence[Path | str] = (),
        catalog_base: Path | str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config or RuntimeConfig()
        #: JSONL skill catalogues routed alongside the roots' skills (``--catalog``).
        self.catalogs: tuple[Path, ...] = tuple(Path(c) for c in catalogs)
        self.catalog_base = Path(catalog_base) if catalog_base is not None else None
        #: The environment prerequisite checks read (the CLI passes os.environ).
        self.env = env
        self._router: Router | None = None
        self._router_key: tuple[int, int] | None = None
        self.explicit_roots: tuple[RootConfig, ...] | None = None
        if roots is not None:
            self.explicit_roots = tuple(
                r if isinstance(r, RootConfig) else RootConfig(Path(r), scope="flag") for r in roots
            )
        if store is None:
            store = open_store(self.config, persist=persist)
        self.store = store
        self._recorder: RouteRecorder | None = None
        self._registry: SkillRegistry | None = None
        self._workflows: Workflows | None = None
        self._dispatch: DispatchService | None = None
        #: Told ``(what, done, total)`` while the router index reads new or changed skills
        #: and embeds their texts (the CLI draws a progress bar on a terminal).
        self.build_progress: Callable[[str, int, int], None] | None = None
        #: Build the router's index without the sections the cache lacks, embedding
        #: each request's pool of them as it is routed (a one-off command's first route
        #: over a new catalogue; see :class:`~skillrt.routing.index.RouterIndex`).
        self.defer_sections = False
        self._invocation: InvocationResolver | None = None
        #: ``(hidden, used)``: catalogue lines named like a skill found before them
        #: (set by :meth:`routable_skills`).
        self.hidden_catalogue_skills: builtins.list[tuple[Skill, Skill]] = []

    # -- Level 1: the registry ---------------------------------------------------------
    @property
    def registry(self) -> SkillRegistry:
        if self._registry is None:
            self._registry = SkillRegistry.discover(
                self.config.discovery,
                project_dir=self.config.project_dir,
                store=self.store,
                explicit_roots=self.explicit_roots,
            )
        return self._registry

    @property
    def discovered(self) -> SkillRegistry | None:
        """The registry if discovery has run (never starts one): what a surface reads
        to report the walk's warnings after a command."""
        return self._registry

    def refresh(self) -> SkillRegistry:
        """Re-walk the roots (cheap for unchanged skills: the index cache answers).

        The new registry replaces the old one in one assignment, so a thread reading
        ``registry`` meanwhile (a long-lived server) sees the old or the new one, never
        none (which would start a second discovery).
        """
        registry = SkillRegistry.discover(
            self.config.discovery,
            project_dir=self.config.project_dir,
            store=self.store,
            explicit_roots=self.explicit_roots,
        )
        self._registry = registry
        return registry

    def list(self, *, include_disabled: bool = True) -> builtins.list[SkillEntry]:
        return self.registry.list(include_disabled=include_disabled)

    def get(self, name: str) -> Skill:
        return self.registry.get(name)

    def validate(self, paths: Sequence[Path | str]) -> builtins.list[ValidationResult]:
        return validate_paths([Path(p) for p in paths], self.config.discovery)

    def catalog(
        self, *, budget: int | None = None, usage: Mapping[str, int] | None = None
    ) -> Catalog:
        return render_catalog(self.registry, budget=budget, usage=usage)

    def enable(self, name: str) -> Skill:
        return self._set_enabled(name, True)

    def disable(self, name: str) -> Skill:
        return self._set_enabled(name, False)

    def _set_enabled(self, name: str, enabled: bool) -> Skill:
        """Persist the enable state of a skill of the roots or of a ``catalogs`` file."""
        from skillrt.errors import SkillNotFound

        try:
            return self.registry.set_enabled(name, enabled)
        except SkillNotFound:
            if not self.catalogs:
                raise
            extra = self.routable_skills()[len(self.registry.skills()) :]
            found = [s for s in extra if s.qualified_name == name] or [
                s for s in extra if s.name == name
            ]
            if len(found) != 1:
                raise
            self.registry.set_enabled_skill(found[0], enabled)
            return found[0]

    # -- Levels 2 and 3: the loader (seed 003) ---------------------------------------
    def observations_dir(self, run_id: str) -> Path:
        """Where large loads spill: ``<project>/.agent/runs/<run_id>/observations``."""
        from skillrt.loading.report import observations_dir

        return observations_dir(self.config.project_dir, run_id)

    def load_body(
        self,
        name: str,
        *,
        run_id: str | None = None,
        spill: bool = True,
        limits: LoaderLimits | None = None,
    ) -> LoadResult:
        """A skill's SKILL.md body within the limits (frontmatter stripped).

        ``limits`` replaces ``config.limits`` for this load (a caller with a smaller
        context budget, such as a prompt hook, asks for a shorter fitted body).
        """
        from skillrt.loading.loader import load_skill_body
        from skillrt.loading.report import new_run_id

        spill_dir = self.observations_dir(run_id or new_run_id()) if spill else None
        with self._span("skillrt.load", {"skillrt.kind": "body", "skillrt.skill": name}):
            return load_skill_body(
                self.get(name), limits or self.config.limits, spill_dir=spill_dir
            )

    def read_resource(
        self,
        name: str,
        path: str,
        section: str | None = None,
        *,
        run_id: str | None = None,
        full: bool = False,
        strict: bool = False,
        spill: bool = True,
    ) -> LoadResult:
        """One file of a skill as an excerpt (a heading's section, or its head)."""
        from skillrt.loading.loader import load_resource
        from skillrt.loading.report import new_run_id

        spill_dir = self.observations_dir(run_id or new_run_id()) if spill else None
        attrs = {"skillrt.kind": "resource", "skillrt.skill": name, "skillrt.path": path}
        with self._span("skillrt.load", attrs):
            return load_resource(
                self.get(name),
                path,
                section,
                self.config.limits,
                spill_dir=spill_dir,
                full=full,
                strict=strict,
            )

    def inject(self, result: LoadResult) -> str:
        """The seed 003 §6 context block for a load result."""
        from skillrt.loading.report import injection_block

        return injection_block(None, result)

    # -- $skill invocation (seed 004) ------------------------------------------------
    @property
    def invocation(self) -> InvocationResolver:
        """The ``$skill`` resolver over the current registry (rebuilt after refresh())."""
        registry = self.registry
        if self._invocation is None or self._invocation.registry is not registry:
            from skillrt.invocation.resolver import InvocationResolver, default_body_loader
            from skillrt.loading.report import new_run_id, observations_dir

            spill_dir = observations_dir(self.config.project_dir, new_run_id())
            loader = default_body_loader(self.config.limits, spill_dir=spill_dir)
            self._invocation = InvocationResolver(registry, load_body=loader)
        return self._invocation

    def resolve(
        self, text: str, *, surface: Surface = "user", apply_commands: bool = False
    ) -> Resolution:
        """Resolve the ``$skill`` mentions and ``/skill`` commands of one message (I1-I6).

        With ``apply_commands``, ``/skill enable|disable`` lines are applied (persisted)
        before the mentions resolve, and ``/skill list`` returns the list.
        """
        return self.invocation.resolve(text, surface=surface, apply_commands=apply_commands)

    def complete(
        self, text: str, cursor: int | None = None, *, limit: int = 20
    ) -> builtins.list[Completion]:
        """Completions for the partial ``$tok`` under ``cursor`` (default: end of text)."""
        return self.invocation.complete(text, cursor, limit=limit)

    def skill_command(
        self, command: str, *, surface: Surface = "user"
    ) -> builtins.list[CommandOutcome]:
        """Run one ``/skill list|enable|disable ...`` line (the leading ``/skill`` optional)."""
        from skillrt.errors import UsageError
        from skillrt.invocation.commands import apply_commands, parse_commands

        line = command.strip()
        if not line.startswith("/skill"):
            line = f"/skill {line}"
        parsed, problems = parse_commands(line)
        if problems or not parsed:
            message = problems[0].message if problems else f"not a /skill command: {command!r}"
            raise UsageError(message, command=command)
        return builtins.list(apply_commands(self.registry, parsed, surface=surface))

    # -- composite skills: the six-step orchestration (seed 002) -----------------------
    def workflows(self) -> Workflows:
        """The orchestration service over this runtime's config, store and registry."""
        if self._workflows is None:
            from skillrt.orchestration.service import Workflows

            self._workflows = Workflows(
                self.config,
                self.store,
                lambda: self.registry,
                agents=self._phase_agents,
                classifier=self._domain_classifier,
                environ=self.env,
            )
        return self._workflows

    def _phase_agents(self) -> PhaseAgents:
        """Each phase agent a delegated dispatch of the composite skill (seed 000)."""
        from skillrt.orchestration.agents import DispatchedAgents

        service = self.dispatch_service()
        workflows = self.workflows()

        def dispatcher(runner: Runner, timeout_s: float | None, run_id: str) -> SkillDispatcher:
            return service.dispatcher(
                runner,
                environ=workflows.environ,
                run_id=run_id,
                keep_prompts=False,
                timeout_s=timeout_s,
                spill=False,
            )

        return DispatchedAgents(
            self.registry, self.config, roles=service.roles(), dispatcher=dispatcher
        )

    def _domain_classifier(self) -> DomainClassifier:
        """Step 2's classifier, on ``orchestration.embedding_backend`` (else routing's;
        hashing when that is "none")."""
        from skillrt.orchestration.domains import DomainClassifier
        from skillrt.routing.embeddings import backend_options, get_backend

        orch = self.config.orchestration
        name = orch.embedding_backend or self.config.routing.embedding_backend
        if name == "none":
            name = "hashing"
        return DomainClassifier(
            get_backend(name, **backend_options(name, self.config.routing)),
            orch.domains or None,
            temperature=orch.domain_temperature,
            certain=orch.domain_certain,
            probable=orch.domain_probable,
        )

    def workflow_start(
        self, skill: str, query: str, **options: Unpack[StartOptions]
    ) -> WorkflowStatus:
        """Run composite ``skill`` on ``query``: the six steps, each phase through
        ``runner`` (or, with ``manual=True``, issued to an outside agent and verified by
        :meth:`workflow_advance`). Raises (with ``run_id``) when the run blocks."""
        return self.workflows().start(skill, query, **options)

    def workflow_status(self, run_id: str) -> WorkflowStatus:
        """FSM state, step outputs (seed 002's data contract), phases, memory files."""
        return self.workflows().status(run_id)

    def workflow_resume(self, run_id: str, **options: Unpack[ResumeOptions]) -> WorkflowStatus:
        """Continue a stopped run from its saved state (its saved runner when none given)."""
        return self.workflows().resume(run_id, **options)

    def workflow_list(self, *, limit: int | None = None) -> builtins.list[RunSummary]:
        """Workflow runs, most recently updated first."""
        return self.workflows().list(limit=limit)

    def workflow_advance(
        self, run_id: str, phase: str, *, observer: Observer | None = None
    ) -> WorkflowStatus:
        """Verify ``phase``'s memory file and advance the run (blocks when it fails)."""
        return self.workflows().advance(run_id, phase, observer=observer)

    # -- telemetry: metrics and feedback (seed 001 §14-15) -----------------------------
    def _span(self, name: str, attributes: Mapping[str, Any]) -> Any:
        """An OpenTelemetry span (a shared no-op unless opentelemetry-api is installed
        and ``telemetry.otel`` is on)."""
        from skillrt.telemetry.otel import span

        return span(name, attributes, enabled=self.config.telemetry.otel)

    def stats(
        self,
        *,
        since: float | str | None = None,
        by_config: bool = False,
        triggers: bool = False,
    ) -> StatsReport:
        """Routing metrics (T2) over the recorded routes, per skill and overall.

        ``since``: a Unix timestamp, an ISO date/time or a duration (``7d``, ``24h``).
        ``by_config`` compares gray-release configs; ``triggers`` adds the pruning report.
        """
        from skillrt.telemetry.report import build_report, parse_since

        ts = parse_since(since) if isinstance(since, str) else since
        self.flush_events()  # this process's own routes count
        return build_report(
            self.store,
            self.config.telemetry,
            since=ts,
            configs=by_config,
            triggers=triggers,
            registry=self.registry if triggers else None,
        )

    def stats_html(self, *, since: float | str | None = None) -> str:
        """The recorded telemetry as a self-contained HTML page (``stats --html``)."""
        from skillrt.telemetry.html import render_stats_html
        from skillrt.telemetry.report import iter_routes, parse_since

        ts = parse_since(since) if isinstance(since, str) else since
        report = self.stats(since=ts)
        return render_stats_html(report, list(iter_routes(self.store, ts)))

    def feedback(
        self,
        route_id: str,
        *,
        correct: str | Sequence[str] | None = None,
        none: bool = False,
        note: str | None = None,
        source: str = "api",
    ) -> Feedback:
        """Record the right answer for a route: skill name(s), or ``none=True``."""
        from skillrt.telemetry.feedback import record_feedback

        names = [correct] if isinstance(correct, str) else list(correct or ())
        self.flush_events()  # the route may still be queued
        return record_feedback(
            self.store,
            self.registry,
            route_id,
            correct=names,
            none=none,
            source=source,
            note=note,
        )

    # -- dispatch and execution (seeds 000, 001 §10-13, §19) -----------------------------
    def dispatch_service(self) -> DispatchService:
        """The dispatch/execution service over this runtime (runners, plans, repair)."""
        if self._dispatch is None:
            from skillrt.dispatch.service import DispatchService, RecordedRoutes

            self._dispatch = DispatchService(
                self.config,
                registry=lambda: self.registry,
                store=self.store,
                resolver=lambda: self.invocation,
                routing=RecordedRoutes(route=self.route, flush_events=self.flush_events),
                env=self.env,
            )
        return self._dispatch

    def build_runner(
        self, options: RunnerOptions | None = None, *, environ: Mapping[str, str] | None = None
    ) -> Runner:
        """The runner ``execution`` config names, ``options`` over it; ``environ`` (default:
        the runtime's ``env``) is where a key is read and a command's allowlist taken."""
        return self.dispatch_service().build_runner(options, environ=environ)

    def dispatch(
        self, request: DispatchRequest, **options: Unpack[DispatchOptions]
    ) -> DispatchResult:
        """Dispatch one skill (000 §5): header, guards, prompt, runner, sub-skills.

        ``runner`` defaults to ``execution`` config (dry-run unless set); ``environ`` is
        the environment the runner's allowlist and prerequisite checks read; with
        ``record=False`` nothing is recorded.
        """
        return self.dispatch_service().dispatch(request, **options)

    def orchestrate(
        self,
        text: str,
        rules: RoutingRules | Path | str | None = None,
        **options: Unpack[DispatchOptions],
    ) -> OrchestrateResult:
        """Pick role + skill for a conversation from routing rules (or the router), then
        dispatch it (000 §8 orchestrate-skill)."""
        return self.dispatch_service().orchestrate(text, rules, **options)

    def run(
        self, text: str, *, role: str | None = None, **options: Unpack[DispatchOptions]
    ) -> RunResult:
        """The whole path: ``$`` mentions or the router -> plan -> dispatch -> result,
        with the 001 §10 fallback and ``requires_now`` sub-skills."""
        return self.dispatch_service().run(text, role=role, **options)

    def run_skill(
        self,
        skill: str,
        task: str,
        context: Mapping[str, Any] | None = None,
        **options: Unpack[DispatchOptions],
    ) -> RunSkillResult:
        """Delegate ``task`` to ``skill`` (001 §19): ``delegated`` or ``error``."""
        with self._span("skillrt.dispatch", {"skillrt.skill": skill}) as sp:
            result = self.dispatch_service().run_skill(skill, task, context, **options)
            sp.set_attribute("skillrt.status", result.status)
            return result

    def edges(self, name: str | None = None) -> tuple[SkillEdge, ...]:
        """The classified skill references of ``name`` (every skill's when None)."""
        return self.dispatch_service().edges(name)

    # -- routing (seed 001 §4-9, §14-16) -----------------------------------------------
    def routable_skills(self) -> builtins.list[Skill]:
        """The registry's skills plus those of every ``catalogs`` file (a catalogue
        line named like a skill already found is hidden: :attr:`hidden_catalogue_skills`)."""
        skills = self.registry.skills()
        self.hidden_catalogue_skills = []
        if self.catalogs:
            import warnings

            from skillrt.eval.datasets import load_catalog_report

            known = {s.qualified_name: s for s in skills}
            for path in self.catalogs:
                report = load_catalog_report(path, base=self.catalog_base)
                for problem in report.problems:
                    warnings.warn(f"{path}: {problem.message}", RuntimeWarning, stacklevel=2)
                for skill in report.skills:
                    used = known.get(skill.qualified_name)
                    if used is None:
                        known[skill.qualified_name] = skill
                        skills.append(skill)
                    elif used.skill_file is None or used.skill_file != skill.skill_file:
                        self.hidden_catalogue_skills.append((skill, used))
        return skills

    @property
    def router(self) -> Router:
        """The router over :meth:`routable_skills`, rebuilt when the registry is refreshed."""
        key = (id(self.registry), len(self.catalogs))
        if self._router is None or self._router_key != key:
            from skillrt.routing.router import Router

            routing_for = None
            telemetry = self.config.telemetry
            if telemetry.candidate_config and telemetry.candidate_share > 0:
                from skillrt.telemetry.tuning import GrayRelease

                routing_for = GrayRelease(telemetry, self.config.routing).routing_for
            registry = self.registry
            router = Router.from_skills(
                self.routable_skills(),
                self.config.routing,
                store=self.store,  # per-skill stats: the shared state
                caches=self.store.local,  # skill vectors: this machine's cache
                is_enabled=registry.is_enabled,
                env=self.env,
                routing_for=routing_for,
                progress=self.build_progress,
                defer_sections=self.defer_sections,
                on_route=(self.routing,),  # each route's T1 event
            )
            self._router = router
            self._router_key = key
        return self._router

    @property
    def routing(self) -> RouteRecorder:
        """What records each route of :attr:`router` (its observer): the T1 event in the
        request, or queued on a background writer for a shared store."""
        if self._recorder is None:
            from skillrt.telemetry.recording import RouteRecorder

            self._recorder = RouteRecorder(
                self.store,
                self.config.telemetry,
                record_query_text=self.config.routing.record_query_text,
            )
        return self._recorder

    def route(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] | None = None,
        top_k: int | None = None,
        candidates: Sequence[str] | None = None,
        explain: bool = False,
        surface: str | None = None,
        record: bool | None = None,
    ) -> RouteResult:
        """Route one query to an ActivationPlan (001 §6) and record its T1 event.

        ``record``: write the event (default: ``telemetry.enabled``); with False the
        caller records it (e.g. off the request path).

        On a store written over the network, a route waits on it (the enable state, when
        the router is built, and per-skill stats) at most ``state.route_wait_s`` all
        told (:func:`~skillrt.store.base.patience`): past it, the route goes on with
        every skill enabled and the stats last read (or none), so a store outage never
        holds a route.
        """
        from skillrt.store.base import patience
        from skillrt.telemetry.otel import span

        surface = surface or "library"
        attrs = {"skillrt.surface": surface, "skillrt.query_chars": len(query)}
        with span("skillrt.route", attrs, enabled=self.config.telemetry.otel) as sp:
            wait = self.config.state.route_wait_s if self.store.background_writes else None
            with patience(wait):  # one budget: building the router, then the route
                result = self.router.route(
                    query,
                    history=history,
                    top_k=top_k,
                    candidates=candidates,
                    explain=explain,
                    surface=surface,
                    record=record,
                )
            sp.set_attribute("skillrt.route_id", result.route_id)
            return result

    def flush_events(self, timeout_s: float = 10.0) -> bool:
        """Wait until queued route events are written (True when none is left)."""
        return self._recorder.flush_events(timeout_s) if self._recorder is not None else True

    def turn_context(
        self,
        prompt: str,
        *,
        history: Sequence[str | Mapping[str, Any]] | None = None,
        surface: str = "hook",
        budget: int | None = None,
        record: bool | None = None,
        loaded: Collection[str] = (),
        client: str | None = None,
    ) -> TurnContext:
        """What one user message adds to the model's context: its ``$`` mentions
        resolved, or the routed skills, as ``Using skill:`` lines and injection blocks
        within ``budget`` characters (the prompt hook, the daemon and the agent-framework
        helpers all answer with this); a skill in ``loaded`` (already in the
        conversation's context) gets a reminder line instead of its body."""
        from skillrt.turns import DEFAULT_BUDGET, build_turn_context

        return build_turn_context(
            self._turn_sources(),
            prompt,
            history=history,
            surface=surface,
            budget=DEFAULT_BUDGET if budget is None else budget,
            record=record,
            loaded=loaded,
            client=client,
        )

    def _turn_sources(self) -> TurnSources:
        """What a turn reads the skills through: this runtime's registry, resolver,
        recording router and loader (each a bound operation, never the runtime)."""
        from skillrt.turns import TurnSources

        def load_body(name: str, *, limits: LoaderLimits) -> LoadResult:
            return self.load_body(name, spill=False, limits=limits)

        from skillrt.invocation.resolver import default_body_loader

        # No spill folder: the text injected is assembled by the turn, and a spill
        # would write into the user's project (<project>/.agent/runs/...), where a
        # hook writes nothing.
        mention_body = default_body_loader(self.config.limits)

        def resolve(text: str) -> Resolution:
            return self.invocation.resolve(text, surface="user", load_body=mention_body)

        return TurnSources(
            registry=self.registry,
            resolve=resolve,
            route=self.route,
            load_body=load_body,
            inject=self.inject,
            limits=self.config.limits,
        )

    def eval(
        self,
        queries: Path | str | Sequence[LabelledQuery],
        *,
        limit: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        keep_outcomes: bool = False,
    ) -> EvalReport:
        """Route a labelled query set over this runtime's skills and measure it (E3).

        Telemetry and skill stats are off for the run (nothing is written to the store
        but cached skill vectors). ``keep_outcomes`` keeps every query's outcome on the
        report (``--per-query``).
        """
        import dataclasses

        from skillrt.eval.datasets import load_queries
        from skillrt.eval.harness import evaluate
        from skillrt.routing.router import Router

        if isinstance(queries, (str, Path)):
            queries = load_queries(queries, limit=limit)
        elif limit is not None:
            queries = list(queries)[:limit]
        config = dataclasses.replace(self.config.routing, use_stats=False, cold_start=False)
        router = Router.from_skills(
            self.routable_skills(),
            config,
            caches=self.store.local,  # vectors from the store; no stats, no recording
            is_enabled=self.registry.is_enabled,
            env=self.env,
            progress=self.build_progress,
        )
        return evaluate(router, queries, progress=progress, keep_outcomes=keep_outcomes)

    def doctor(
        self,
        *,
        queries: Path | str | Sequence[LabelledQuery] | None = None,
        samples: int | None = None,
        context_window: int | None = None,
        daemon_socket: str | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        commands: CommandLine | None = None,
    ) -> DoctorReport:
        """Diagnose this runtime's catalogue (docs/doctor.md): environment, shadowing,
        unreachable skills, risk, listing budget, and with ``queries`` (a labelled set)
        each skill's trigger precision and recall. Records nothing; the index cache is
        read (and filled for new skills and pseudo-requests)."""
        from skillrt.doctor.service import diagnose
        from skillrt.eval.datasets import load_queries

        source = ""
        if isinstance(queries, (str, Path)):
            source = str(queries)
            queries = load_queries(queries)
        skills = self.routable_skills()
        return diagnose(
            skills,
            config=self.config,
            registry=self.registry,
            store=self.store,
            explicit_roots=self.explicit_roots,
            catalogs=self.catalogs,
            env=dict(self.env) if self.env is not None else None,
            queries=queries,
            queries_source=source,
            samples=samples,
            context_window=context_window,
            daemon_socket=daemon_socket,
            progress=progress or self.build_progress,
            commands=commands,
            hidden=self.hidden_catalogue_skills,
        )

    def why_not(self, query: str, skill: str) -> WhyNot:
        """Why ``skill`` is not what ``query`` selects: its rank, its score against the
        winner's, the threshold and every gate it failed. Records nothing."""
        from skillrt.routing.why_not import why_not

        return why_not(self.router, query, skill)

    def close(self) -> None:
        """Write the queued route events, then close the store."""
        if self._recorder is not None:
            self._recorder.close()
        self.store.close()

    def __enter__(self) -> SkillRuntime:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
