"""``index``: build the routing index of the skills found now, and finish a deferred one.

A first ``route`` over a catalogue the cache has not seen answers from a deferred index
(the descriptions, and the sections of its own request's candidates) and starts this
command in the background to embed the rest (``routing_cmds.finish_in_background``), so
the answer does not wait for every section of every skill (see
:mod:`skillrt.routing.index_build`). A ``skillrt index`` typed while that build runs
waits for it (``--wait``, bounded) rather than leave the person without an index.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.cli.routing_cmds import BACKENDS, add_catalogue_options

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skillrt.cli.context import CliContext
    from skillrt.runtime import SkillRuntime

#: How long a foreground ``skillrt index`` waits for a build under way (``--wait``).
DEFAULT_WAIT_S = 120.0


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "index",
        parents=[common],
        help="build the routing index now: every skill's fields and vectors, saved",
        description="Read every skill found (and --catalog files), embed what the cache "
        "lacks and save the routing index, so the next route, hook prompt or daemon reads "
        "it instead of building it. A first 'route' over a new catalogue starts this in "
        "the background (--background) after it answers.",
    )
    add_catalogue_options(p)
    p.add_argument("--backend", choices=BACKENDS, help="embedding backend (default: config)")
    p.add_argument(
        "--background",
        action="store_true",
        help="at low priority, its output for a log (what 'route' starts); it never "
        "waits: finding another build holding this cache's index lock, it exits 0 at "
        "once, reporting built: false",
    )
    p.add_argument(
        "--wait",
        type=float,
        default=DEFAULT_WAIT_S,
        metavar="SECONDS",
        help="when another build holds this cache's index lock (the background build a "
        "first 'route' starts, logging to router-index/build.log), wait up to SECONDS "
        f"for it to end (default {DEFAULT_WAIT_S:g}), then report built: false with "
        "waited and the index it saved, or build this one when it saved none; still "
        "held then: error E_INDEX_BUILD_BUSY. 0: return at once with built: false",
    )
    p.set_defaults(handler=cmd_index)


def cmd_index(ctx: CliContext) -> int:
    import time

    from skillrt.cli.routing_cmds import routing_config
    from skillrt.routing.index_build import index_folder

    args = ctx.args
    if not 0 <= args.wait < float("inf"):
        from skillrt.errors import UsageError

        raise UsageError("--wait must be 0 or a positive number of seconds", argument="--wait")
    started = time.perf_counter()
    runtime = ctx.open_runtime(
        config=routing_config(ctx), catalogs=args.catalog, catalog_base=args.base
    )
    folder = index_folder(runtime.store.local)
    if args.background:
        os.nice(10)  # the person's next commands keep the cores
    if folder is None:  # a memory-only cache: nothing to save, nothing to lock
        return _built(ctx, runtime, started, None)
    return _build_or_wait(ctx, runtime, started, folder)


def _build_or_wait(ctx: CliContext, runtime: SkillRuntime, started: float, folder: Path) -> int:
    """Build under ``folder``'s lock; when another process holds it, return at once
    (``--background``, ``--wait 0``) or wait for it, up to ``--wait`` seconds, and then
    report the index it saved, or build this one's when it saved none."""
    import sys
    import time

    from skillrt.errors import IndexBuildBusy
    from skillrt.routing.index_build import (
        LOCK_NAME,
        LOG_NAME,
        build_holder,
        build_lock,
        saved_index,
        wait_for_build,
    )

    args = ctx.args
    log = folder / LOG_NAME
    deadline = time.monotonic() + args.wait
    waited: float | None = None  # None: not waited yet
    while True:
        with build_lock(folder) as held:
            if held:
                extra = {"waited": round(waited, 2)} if waited is not None else {}
                return _built(ctx, runtime, started, folder, extra)
        holder = build_holder(folder)
        who = f" (pid {holder})" if holder is not None else ""
        if args.background or args.wait == 0:
            data = {
                "ok": True,
                "built": False,
                "reason": f"another process{who} is building it",
                "holder": holder,
            }
            ctx.emit(data, f"skillrt index: not built: {data['reason']} ({folder})")
            return 0
        if waited is None and sys.stderr.isatty():  # one line, on a terminal only
            sys.stderr.write(f"skillrt index: waiting up to {args.wait:g} s for the build ")
            sys.stderr.write(f"under way{who} (log: {log})\n")
        this_wait = wait_for_build(folder, max(0.0, deadline - time.monotonic()))
        if this_wait is None:
            raise IndexBuildBusy(
                f"another build{who} of this cache's routing index still runs after "
                f"{args.wait:g} s (lock: {folder / LOCK_NAME}; a background build logs to "
                f"{log}); run 'skillrt index' again later, or with a longer --wait",
                folder=str(folder),
                log=str(log),
                waited=args.wait,
                holder=holder,
            )
        waited = (waited or 0.0) + this_wait
        routing = runtime.config.routing
        saved = saved_index(runtime.routable_skills(), routing, runtime.store.local)
        if saved is not None:
            data = {
                "ok": True,
                "built": False,
                "reason": "another process was building it; that build ended while this "
                "one waited, and saved the index of these skills",
                "waited": round(waited, 2),
                "folder": str(folder),
                "saved": str(saved),
            }
            ctx.emit(data, f"skillrt index: waited {waited:.1f} s for another build; the "
                     f"index is saved in {saved}")  # fmt: skip
            return 0
        # That build saved no index of these skills (another catalogue, or it failed):
        # build this one's, under the lock, once it is free.


def _built(
    ctx: CliContext,
    runtime: SkillRuntime,
    started: float,
    folder: Path | None,
    extra: Mapping[str, Any] | None = None,
) -> int:
    import time

    router = runtime.router
    cache = router.index.cache
    seconds = round(time.perf_counter() - started, 2)
    data: dict[str, Any] = {
        "ok": True,
        "built": True,
        "skills": len(router.index),
        "embedded": cache.misses,
        "seconds": seconds,
        "folder": str(folder) if folder is not None else None,
        "saved": str(router.saved_at) if router.saved_at is not None else None,
        **(extra or {}),
    }
    where = f"saved in {router.saved_at}" if router.saved_at else "not saved (nothing to save)"
    ctx.emit(
        data,
        f"skillrt index: {len(router.index):,} skills, {cache.misses:,} texts embedded, "
        f"{seconds:.1f} s; {where}",
    )
    return 0
