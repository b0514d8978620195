"""``index``: build the routing index of the skills found now, and finish a deferred one.

A first ``route`` over a catalogue the cache has not seen answers from a deferred index
(the descriptions, and the sections of its own request's candidates) and starts this
command in the background to embed the rest (``routing_cmds.finish_in_background``), so
the answer does not wait for every section of every skill (see
:mod:`skillrt.routing.index_build`).
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
        help="at low priority, its output for a log (what 'route' starts); with or "
        "without it, a build that finds another one holding this cache's index lock "
        "exits 0 at once, reporting built: false",
    )
    p.set_defaults(handler=cmd_index)


def cmd_index(ctx: CliContext) -> int:
    import time

    from skillrt.cli.routing_cmds import routing_config
    from skillrt.routing.index_build import build_lock, index_folder

    args = ctx.args
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
        if not held:
            data = {"ok": True, "built": False, "reason": "another process is building it"}
            ctx.emit(data, f"skillrt index: not built: {data['reason']} ({folder})")
            return 0
        return _built(ctx, runtime, started, folder)


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
