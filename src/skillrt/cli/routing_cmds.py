"""``route`` and ``eval``: the router (seed 001 §6-9) and its measurement (SPEC E3)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.cli.daemon_use import add_daemon_options

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.eval.harness import EvalReport
    from skillrt.routing.plan import RouteResult
    from skillrt.routing.why_not import WhyNot
    from skillrt.runtime import SkillRuntime

BACKENDS = ("auto", "onnx-minilm", "hashing", "sentence-transformers", "none")


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "route",
        parents=[common],
        help="route a request to skills: the activation plan, reasons and scores",
        description="Route QUERY over the skills found (and --catalog files): prints the "
        "activation plan, the routing reason, every candidate with its recall sources and "
        "six-term score, and the recorded route event. 'No skill' is a valid plan.",
    )
    p.add_argument("query", metavar="QUERY")
    p.add_argument(
        "--history",
        metavar="FILE",
        help="prior messages: a JSON list of strings or {role, content} (or text lines)",
    )
    p.add_argument("--top-k", type=int, metavar="N", help="semantic top-k (default 3)")
    p.add_argument("--explain", action="store_true", help="also show the raw signals")
    add_catalogue_options(p)
    p.add_argument("--candidates", metavar="NAMES", help="comma-separated: route only within")
    p.add_argument(
        "--why-not",
        metavar="SKILL",
        help="explain why SKILL is not selected: its rank, its terms against the winner's, "
        "the threshold and every gate it failed (nothing is recorded)",
    )
    p.add_argument("--backend", choices=BACKENDS, help="embedding backend (default: config)")
    p.add_argument(
        "--no-cold-start", action="store_true", help="no cold-start damping for this route"
    )
    p.add_argument(
        "--no-defer",
        action="store_true",
        help="over a catalogue new to the cache, embed every section before answering "
        "(default: the descriptions and this request's candidates' sections, the rest "
        "in the background by 'skillrt index --background')",
    )
    add_daemon_options(p)
    p.set_defaults(handler=cmd_route)

    p = sub.add_parser(
        "eval",
        parents=[common],
        help="route a labelled query set against skills (folders or JSONL) and report accuracy",
        description="Route every query of a labelled JSONL set (within its 'candidates' "
        "when given) over the skills of --root folders and/or a --catalog JSONL file, and "
        "report top-1, hit@k (with each query's also_ok), recall@k, set precision/recall, "
        "no-skill precision/recall/F1, latency and the most frequent confusions. Nothing is "
        "recorded: the store is in memory unless --state is given (then it only caches "
        "skill vectors and sections).",
    )
    add_catalogue_options(p)
    p.add_argument(
        "--queries",
        required=True,
        action="append",
        metavar="FILE",
        help="queries.*.jsonl (repeatable: the files are evaluated as one set)",
    )
    p.add_argument(
        "--per-query",
        metavar="FILE",
        help="write one JSON line per query (query, expected, also_ok, ranking, scores, "
        "selected, latency)",
    )
    p.add_argument("--limit", type=int, metavar="N", help="only the first N queries")
    p.add_argument("--backend", choices=BACKENDS, help="embedding backend (default: config)")
    p.add_argument("--threshold", type=float, metavar="T", help="selection threshold override")
    p.set_defaults(handler=cmd_eval)


def add_catalogue_options(p: argparse.ArgumentParser) -> None:
    """``--catalog`` and ``--base``: the catalogue inputs ``route``, ``eval`` and
    ``doctor`` take alike (with the global ``--root``)."""
    p.add_argument(
        "--catalog",
        action="append",
        metavar="FILE",
        default=[],
        help="a JSONL skill catalogue besides the roots' skills (repeatable)",
    )
    p.add_argument(
        "--base",
        metavar="DIR",
        help="folder a catalogue line's 'path' is relative to (default: the catalogue's folder)",
    )


def catalogue_only(config: Any) -> Any:
    """``config`` searching only the given inputs: no configured, conventional or client
    skill folders (a ``--catalog`` without ``--root`` means that catalogue alone), but
    the config's walk limits, as every command reads them."""
    import dataclasses

    discovery = dataclasses.replace(
        config.discovery, roots=(), conventional_roots=False, client_roots=False,
        claude_roots=False, codex_roots=False, gemini_roots=False,
    )  # fmt: skip
    return config.replace_section(discovery=discovery)


def routing_config(ctx: CliContext, **changes: Any) -> Any:
    """The config with ``--backend`` and ``changes`` applied to its routing section."""
    import dataclasses

    config = ctx.config()
    routing = config.routing
    backend = getattr(ctx.args, "backend", None)
    if backend:
        changes["embedding_backend"] = backend
    if changes:
        routing = dataclasses.replace(routing, **changes)
    return config.replace_section(routing=routing)


def cmd_route(ctx: CliContext) -> int:
    from skillrt.errors import UsageError
    from skillrt.routing.history import load_history

    args = ctx.args
    if args.top_k is not None and args.top_k < 1:
        raise UsageError("--top-k must be at least 1", top_k=args.top_k)
    history = load_history(args.history) if args.history else None
    candidates = None
    if args.candidates:
        candidates = [c.strip() for c in args.candidates.split(",") if c.strip()]
    if args.why_not:
        return _why_not(ctx)
    if not (args.catalog or args.backend or args.no_cold_start):
        # Same config as the daemon's: it can answer (its result prints the same way).
        from skillrt.cli.daemon_use import ask_daemon

        request = {"query": args.query, "history": history, "top_k": args.top_k,
                   "candidates": candidates, "explain": args.explain, "surface": "cli"}  # fmt: skip
        data = ask_daemon(ctx, "route", {k: v for k, v in request.items() if v is not None})
        if data is not None:
            from skillrt.routing.plan import RouteResult
            from skillrt.serialize import from_jsonable

            remote = from_jsonable(RouteResult, data)
            ctx.emit(data, lambda: render_route(remote, explain=args.explain))
            return 0
    changes: dict[str, Any] = {}
    if args.no_cold_start:
        changes["cold_start"] = False
    runtime = ctx.open_runtime(
        config=routing_config(ctx, **changes),
        catalogs=args.catalog,
        catalog_base=args.base,
        env=dict(os.environ),
    )
    # One route: it need not wait for every section of a catalogue new to the cache.
    runtime.defer_sections = not args.no_defer
    result = runtime.route(
        args.query,
        history=history,
        top_k=args.top_k,
        candidates=candidates,
        explain=args.explain,
        surface="cli",
    )
    ctx.emit(result, lambda: render_route(result, explain=args.explain))
    pending = runtime.router.index.pending_sections
    if pending:
        later = finish_in_background(ctx, runtime)
        sys.stderr.write(
            f"skillrt: answered before the sections of {len(pending):,} skills were embedded "
            f"(this request's likely skills have theirs); {later}\n"
        )
    return 0


def finish_in_background(ctx: CliContext, runtime: SkillRuntime) -> str:
    """After a route from a deferred index: start ``skillrt index --background`` with this
    command's roots, config, state and catalogues, unless a build already runs (or the
    cache is memory-only); what happens to the other sections, in words."""
    from skillrt.hooks.autostart import start_detached
    from skillrt.routing.index_build import LOG_NAME, build_holder, index_folder, is_building

    folder = index_folder(runtime.store.local)
    if folder is None:
        return "the cache is in memory, so the next command embeds them again"
    if is_building(folder):
        holder = build_holder(folder)
        who = f" (pid {holder})" if holder is not None else ""
        return f"another 'skillrt index'{who} is embedding them in the background"
    args = ctx.args
    argv = [sys.executable, "-m", "skillrt"]
    # "--flag=value": a value that starts with "-" stays a value.
    argv += [f"--root={root}" for root in getattr(args, "root", None) or ()]
    for flag in ("config", "state"):
        value = getattr(args, flag, None)
        if value:
            argv.append(f"--{flag}={value}")
    if getattr(args, "no_client_roots", False):
        argv.append("--no-client-roots")
    argv += ["index", "--background", *(f"--catalog={c}" for c in args.catalog)]
    if args.base:
        argv.append(f"--base={args.base}")
    if args.backend:
        argv.append(f"--backend={args.backend}")
    log = folder / LOG_NAME
    try:
        pid = start_detached(
            argv, cwd=os.getcwd(), log_path=str(log), environ=os.environ, by="skillrt route"
        )
    except OSError as exc:  # an unwritable cache folder: the answer stands
        return f"the background build could not start ({exc}); 'skillrt index' builds them"
    return f"'skillrt index' (pid {pid}) embeds them in the background (log: {log})"


def _why_not(ctx: CliContext) -> int:
    args = ctx.args
    changes: dict[str, Any] = {"cold_start": False} if args.no_cold_start else {}
    runtime = ctx.open_runtime(
        config=routing_config(ctx, **changes),
        catalogs=args.catalog,
        catalog_base=args.base,
        env=dict(os.environ),
    )
    result = runtime.why_not(args.query, args.why_not)
    ctx.emit({"why_not": result}, lambda: render_why_not(result))
    return 0


def render_why_not(result: WhyNot) -> str:
    from skillrt.cli.output import bold, table
    from skillrt.score_terms import SCORE_TERMS

    rank = f"#{result.rank}" if result.rank is not None else "not recalled"
    score = f"{result.score:.2f}" if result.score is not None else "-"
    winner = (
        f"{result.winner} ({result.winner_score:.2f})" if result.winner is not None else "no skill"
    )
    lines = [
        bold(f"Why not {result.skill}?"),
        f"  rank {rank}, total {score}, threshold {result.threshold:.2f}; selected: {winner}",
        "",
    ]
    lines += [f"  - [{r.code}] {r.message}" for r in result.reasons]
    if result.terms:
        keys = list(next(iter(result.terms.values())))
        cols = list(result.terms)
        reading = {term.name: term.reading or term.name for term in SCORE_TERMS}
        rows = [
            [reading.get(k, k) + (" <- decided" if k == result.decided_by else ""),
             *(f"{result.terms[c][k]:.2f}" for c in cols)]
            for k in keys
        ]  # fmt: skip
        head = [result.skill if c == "skill" else (result.winner or c) for c in cols]
        lines += ["", table(["TERM (higher favours the skill)", *head], rows)]
    return "\n".join(lines)


def render_route(result: RouteResult, *, explain: bool = False) -> str:
    from skillrt.cli.output import bold, table
    from skillrt.score_terms import SCORE_TERMS

    plan = result.plan
    lines: list[str] = []
    if plan.no_skill:
        lines.append(bold("Plan: no skill") + " (the general flow handles it)")
    else:
        lines.append(bold("Plan: ") + " -> ".join(" + ".join(g) for g in plan.groups))
        for planned in plan.skills:
            tag = " [forced]" if planned.forced else ""
            safe = "parallel-safe" if planned.parallel_safe else "sequential"
            lines.append(
                f"  {planned.name}{tag}  score {planned.score:.2f}  "
                f"cost {planned.cost_hint}  {safe}"
            )
        lines.append(f"  estimated cost: {plan.estimated_cost}")
    lines.append(f"  fallback: {' -> '.join(plan.fallback_path)}")
    for pointer in result.pointers:
        lines.append(f"  pointer: {pointer.name} ({pointer.why}; load: {pointer.load})")
    lines.append(bold("Reason: ") + result.routing_reason)
    lines.append("")
    rows = []
    for c in result.candidates:
        s = c.score
        rows.append(
            [
                c.name,
                c.status,
                "+".join(c.sources),
                f"{s.total:.2f}",
                *(f"{getattr(s, term.name):.2f}" for term in SCORE_TERMS),
                c.reason + (f" [missing: {', '.join(c.missing)}]" if c.missing else ""),
            ]
        )
    headers = [
        "CANDIDATE",
        "STATUS",
        "SOURCES",
        "TOTAL",
        *(term.column for term in SCORE_TERMS),
        "REASON",
    ]
    lines.append(table(headers, rows))
    if explain:
        lines.append("")
        lines.append(bold("Signals"))
        for c in result.candidates:
            sig = "  ".join(f"{k}={v:g}" for k, v in c.score.signals.items())
            lines.append(f"  {c.name}: {sig}")
            if c.score.matched:
                lines.append(f"    matched: {c.score.matched}")
    lines.append("")
    for event in result.events:
        state = "recorded" if event.get("recorded") else "NOT recorded"
        lines.append(
            f"event: route {event.get('route_id')} {state} in {event.get('table')} "
            f"(query_type={event.get('query_type')}, candidates={event.get('candidate_count')}, "
            f"config={event.get('config_id')})"
        )
    lines.append(f"route_id {result.route_id}  {result.latency_ms:.1f} ms")
    return "\n".join(lines)


def cmd_eval(ctx: CliContext) -> int:
    from skillrt.errors import UsageError
    from skillrt.store import MEMORY, open_location, open_store

    args = ctx.args
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1", limit=args.limit)
    changes: dict[str, Any] = {}
    if args.threshold is not None:
        if not 0.0 <= args.threshold <= 1.0:
            raise UsageError("--threshold must be within 0..1", threshold=args.threshold)
        changes["selection_threshold"] = args.threshold
    roots = getattr(args, "root", None)
    if not args.catalog and not roots:
        raise UsageError("eval needs --catalog FILE, --root DIR, or both")
    # Only the catalogue and the given roots are routed over.
    config = catalogue_only(routing_config(ctx, **changes))
    state = getattr(args, "state", None)
    store = open_store(config) if state else open_location(MEMORY)
    runtime = ctx.open_runtime(
        config=config,
        roots=[Path(r).resolve() for r in roots] if roots else [],
        store=store,
        catalogs=args.catalog,
        catalog_base=args.base,
    )
    from skillrt.cli.output import ProgressBar

    progress = ProgressBar()
    runtime.build_progress = progress.build
    from skillrt.eval.datasets import load_queries

    queries = [q for f in args.queries for q in load_queries(Path(f))]
    report = runtime.eval(
        queries,
        limit=args.limit,
        progress=progress,
        keep_outcomes=bool(args.per_query),
    )
    if args.per_query:
        _write_per_query(Path(args.per_query), report)
    source = ", ".join([*args.catalog, *(roots or ())])
    ctx.emit(report, lambda: render_eval(report, source, ", ".join(args.queries)))
    return 0


def _write_per_query(path: Path, report: EvalReport) -> None:
    from skillrt.atomic import atomic_write_text
    from skillrt.serialize import to_json

    lines = [to_json(o) for o in report.outcomes]
    atomic_write_text(path, "".join(f"{line}\n" for line in lines), shared=True)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def render_eval(report: EvalReport, catalog: str, queries: str) -> str:
    from skillrt.cli.output import bold, table

    c = report.counts
    lines = [
        bold(f"Eval: {queries} over {catalog}"),
        f"  {c['queries']} queries ({c['single']} single-skill, {c['multi']} multi-skill, "
        f"{c['no_skill']} no-skill, {c['with_candidates']} with candidate lists); "
        f"{report.catalog_size} skills; backend {report.backend}; threshold {report.threshold}",
        "",
    ]
    rows = [
        ["top-1 (ranking)", _pct(report.top1), f"macro {_pct(report.macro_top1)}"],
        [
            "hit@1 / @3 / @5",
            f"{_pct(report.hit_at_1)} / {_pct(report.hit_at_3)} / {_pct(report.hit_at_5)}",
            "expected or an also_ok skill ranked within k",
        ],
        ["recall@3", _pct(report.recall_at_3), ""],
        ["recall@5", _pct(report.recall_at_5), ""],
        ["selected accuracy", _pct(report.selected_accuracy), "primary selected skill == expected"],
        [
            "multi-skill set P / R / F1",
            f"{_pct(report.set_precision)} / {_pct(report.set_recall)} / {_pct(report.set_f1)}",
            f"recall@5 {_pct(report.multi_recall_at_5)}, @10 {_pct(report.multi_recall_at_10)}",
        ],
        [
            "no-skill P / R / F1",
            f"{_pct(report.no_skill_precision)} / {_pct(report.no_skill_recall)} / "
            f"{_pct(report.no_skill_f1)}",
            f"{c['predicted_no_skill']} answered 'no skill'",
        ],
        [
            "clean plans",
            _pct(report.clean_rate),
            "single-need: planned, and only right skills"
            + (f" ({report.mean_injected:.2f} injected each)" if report.mean_injected else ""),
        ],
        [
            "injected precision",
            _pct(report.injected_precision),
            "planned skills that are expected or also_ok",
        ],
        [
            "two-need covered",
            _pct(report.covered_rate),
            "every expected part planned (itself or an also_ok)",
        ],
        [
            "latency (route)",
            f"p50 {report.latency_ms['p50']:.2f} ms",
            f"p95 {report.latency_ms['p95']:.2f} ms; "
            + (
                f"embedding {report.embed_ms_per_query:.2f} ms/query (batched)"
                if report.embed_ms_per_query
                else "query embedding included"
            ),
        ],
    ]
    lines.append(table(["METRIC", "VALUE", "NOTE"], rows))
    if report.by_style:
        lines.append("")
        lines.append(bold("By request style"))
        style_rows = [
            [
                style,
                f"{m['queries']:.0f}",
                _pct(m["hit_at_1"]),
                _pct(m["clean_rate"]),
                "-" if m["mean_injected"] is None else f"{m['mean_injected']:.2f}",
                _pct(m["injected_precision"]),
                _pct(m["covered_rate"]),
                _pct(m["no_skill_recall"]),
            ]
            for style, m in report.by_style.items()
        ]
        headers = ["STYLE", "N", "HIT@1", "CLEAN", "INJECTED", "PRECISION", "COVERED", "NO-SKILL"]
        lines.append(table(headers, style_rows))
    if report.confusion:
        lines.append("")
        lines.append(bold("Most frequent confusions (expected -> selected)"))
        for conf in report.confusion:
            lines.append(f"  {conf.count:4d}  {conf.expected} -> {conf.predicted}")
    return "\n".join(lines)
