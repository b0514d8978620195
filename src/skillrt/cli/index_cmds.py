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
        "waited and the index it saved; still held then: error E_INDEX_BUILD_BUSY. "
        "0: return at once with built: false",
    )
    p.set_defaults(handler=cmd_index)


def cmd_index(ctx: CliContext) -> int:
    import time

    from skillrt.cli.routing_cmds import routing_config
    from skillrt.routing.index_build import build_holder, build_lock, index_folder

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
    with build_lock(folder) as held:
        if held:
            return _built(ctx, runtime, started, folder)
    if args.background or args.wait == 0:
        holder = build_holder(folder)
        who = f" (pid {holder})" if holder is not None else ""
        data = {"ok": True, "built": False, "reason": f"another process{who} is building it"}
        ctx.emit(data, f"skillrt index: not built: {data['reason']} ({folder})")
        return 0
    return _waited(ctx, runtime, folder, args.wait)


def _waited(ctx: CliContext, runtime: SkillRuntime, folder: Path, wait: float) -> int:
    """Wait up to ``wait`` seconds for the build holding ``folder``'s lock to end; report
    what it left, or raise :class:`~skillrt.errors.IndexBuildBusy`."""
    import sys

    from skillrt.errors import IndexBuildBusy
    from skillrt.routing.index_build import (
        LOCK_NAME,
        LOG_NAME,
        build_holder,
        saved_index,
        wait_for_build,
    )

    log = folder / LOG_NAME
    if sys.stderr.isatty():  # one line, and only on a terminal, like the progress bar
        sys.stderr.write(f"skillrt index: waiting up to {wait:g} s for the build under way ")
        sys.stderr.write(f"(log: {log})\n")
    waited = wait_for_build(folder, wait)
    if waited is None:
        holder = build_holder(folder)
        who = f" (pid {holder})" if holder is not None else ""
        raise IndexBuildBusy(
            f"another build{who} of this cache's routing index still runs after {wait:g} s "
            f"(lock: {folder / LOCK_NAME}; a background build logs to {log}); "
            "run 'skillrt index' again later, or with a longer --wait",
            folder=str(folder),
            log=str(log),
            waited=wait,
        )
    saved = saved_index(runtime.routable_skills(), runtime.config.routing, runtime.store.local)
    reason = "another process was building it; that build ended while this one waited"
    if saved is None:
        reason += ", and no index of these skills is saved: 'skillrt index' again builds it"
    data: dict[str, Any] = {
        "ok": True,
        "built": False,
        "reason": reason,
        "waited": round(waited, 2),
        "folder": str(folder),
        "saved": str(saved) if saved is not None else None,
    }
    where = (
        f"the index is saved in {saved}"
        if saved is not None
        else "no index of these skills is saved: run 'skillrt index' again to build it"
    )
    ctx.emit(data, f"skillrt index: waited {waited:.1f} s for another build to end; {where}")
    return 0


def _built(ctx: CliContext, runtime: SkillRuntime, started: float, folder: Path | None) -> int:
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
    }
    where = f"saved in {router.saved_at}" if router.saved_at else "not saved (nothing to save)"
    ctx.emit(
        data,
        f"skillrt index: {len(router.index):,} skills, {cache.misses:,} texts embedded, "
        f"{seconds:.1f} s; {where}",
    )
    return 0
