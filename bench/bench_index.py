"""A cold index: the first ``skillrt route`` over a catalogue nothing was embedded for.

    python bench/bench_index.py [--skills both|213|1000] [--runs 1] [--datasets DIR]
                                [--corpora DIR]

Each run is a fresh ``skillrt route`` process with an empty state folder (no cached
fields, vectors, token states or saved index), as a user's first command: it reads every
skill, embeds the descriptions, and the sections of the request's candidate pool, and
answers; then ``skillrt index --background`` (which the route starts) embeds the other
sections and saves the index. It prints the wall time, the CPU seconds (user + system)
and the peak resident memory of the route process (``wait4``), the time until the whole
index is saved (from the route's start, waiting for the background build) and the
texts and tokens the whole index embeds. The embedding model's derived query copy, made
once per machine, is kept (``~/.cache/skillrt/models``). ``--whole`` times the route
with the whole index built up front (``route --no-defer``: the route before deferral).

``--agreement`` checks that a deferred first route answers as the whole index does: over
the 213 dev skills and every dev request (both query files), each request routed as a
first command (a new router over an index whose every section is pending; the vectors
it embeds come from ``--cache``, filled on the first run, so only the decision is
timed), against the router over the whole index: how many plans and pointers are the
same, and the accuracy of both (``bench_real_skills.py``'s metrics).

Catalogues: the 213 skills of the real-skills dev catalogue (``--catalog``, bodies from
the corpora), and 1,000 real skills (``bench/real_catalogue.py``: every real skill, then
remixes) as a ``--root`` folder.

Targets (issue 30), on a quiet 2-core machine: 213 skills <= 20 s and <= 500 MB;
1,000 skills <= 90 s and <= 800 MB. Wall time on a busy machine is noise; the CPU
seconds and the peak memory are not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dev_data import add_data_arguments, real_skills, real_skills_catalogue
from real_catalogue import build_real_catalogue

TARGETS = {213: (20.0, 500.0), 1000: (90.0, 800.0)}
QUERY = "review my pull request for security problems"


#: How long the background build may take before the bench gives up on it.
BUILD_TIMEOUT_S = 900.0


def first_route(args: list[str], state: Path, *, whole: bool) -> tuple[float, float, float, float]:
    """One cold ``skillrt route`` process: (wall s, CPU s, peak RSS MB, seconds until the
    whole index is saved)."""
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    args = [*args, "--no-defer"] if whole else args
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillrt", "route", QUERY, *args, "--state", str(state),
             "--json", "--no-daemon"],
            stdout=out,
            stderr=subprocess.DEVNULL,
            env=env,
        )  # fmt: skip
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            out.seek(0)
            raise SystemExit(f"skillrt route failed: {out.read()[:500]!r}")
    whole_s = wait_for_index(state / "router-index", started)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, whole_s


def wait_for_index(folder: Path, started: float) -> float:
    """Seconds from ``started`` until the whole index is saved in ``folder`` and no
    build holds its lock (the route's background build, if it started one)."""
    from skillrt.routing.index_build import is_building

    deadline = time.monotonic() + BUILD_TIMEOUT_S
    while not any(folder.glob("*.npz")) or is_building(folder):
        if time.monotonic() > deadline:
            raise SystemExit(f"no index saved in {folder} after {BUILD_TIMEOUT_S:.0f} s")
        time.sleep(0.05)
    return time.perf_counter() - started


def embedded(skills: list[object]) -> tuple[int, int]:
    """Texts and tokens the index of ``skills`` embeds (vectors and token states)."""
    from importlib import resources

    from tokenizers import Tokenizer

    from skillrt.routing.fields import load_fields
    from skillrt.routing.semantic import document_text, part_texts
    from skillrt.routing.tokens import token_texts
    from skillrt.skills.model import Skill

    typed = [s for s in skills if isinstance(s, Skill)]
    data = resources.files("skillrt.routing.embeddings") / "data" / "tokenizer.json"
    tokenizer = Tokenizer.from_str(data.read_text(encoding="utf-8"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=256)
    fields = load_fields(typed, None)
    vectors = {document_text(s) for s in typed}
    vectors |= {t for s in typed for t in part_texts(s)}
    vectors |= {x.embed_text for f in fields for x in f.sections}
    tokens = {t for s in typed for t in token_texts(s)}
    texts = [*vectors, *tokens]
    return len(texts), sum(len(e.ids) for e in tokenizer.encode_batch(texts))


def agreement(args: argparse.Namespace) -> None:
    """Deferred first routes against the whole index, on the dev requests."""
    from bench_real_skills import EVAL_CFG, Run
    from dev_data import ALL_REAL_QUERIES, queries_of

    from skillrt.routing.fields import load_fields
    from skillrt.routing.index import RouterIndex
    from skillrt.routing.router import Router
    from skillrt.routing.vector_cache import VectorCache
    from skillrt.store import open_location

    class NothingCached(VectorCache):
        """A cache that says every text is missing (so the index defers every section)
        but still reads what the store holds (so nothing is embedded again)."""

        def missing(self, backend: object, items: list[tuple[str, str]]) -> set[str]:  # type: ignore[override]
            return {h for h, _ in items}

    skills = real_skills(args.datasets, args.corpora)
    queries = queries_of(ALL_REAL_QUERIES)
    args.cache.mkdir(parents=True, exist_ok=True)
    store = open_location(args.cache / "vectors.db")
    whole = Router.from_skills(skills, EVAL_CFG, store=store, backend="onnx-minilm")
    assert whole.index.semantic is not None
    deferred = RouterIndex(
        skills,
        backend=whole.index.semantic.backend,
        cache=NothingCached(store),
        token_match_max_texts=EVAL_CFG.token_match_max_texts,
        fields=load_fields(skills, store),
        defer_sections=True,
    )
    runs = {"whole index": Run("whole"), "deferred first route": Run("deferred")}
    same = 0
    filled: list[int] = []
    for q in queries:
        answers = []
        first = Router(deferred, EVAL_CFG, store=store)  # a first command's router
        for name, router in (("whole index", whole), ("deferred first route", first)):
            run = runs[name]
            started = time.perf_counter()
            result = router.route(q.query, surface="eval")
            run.record(result, (time.perf_counter() - started) * 1000.0)
            answers.append((result.plan.names, run.pointers[-1]))
        filled.append(len(deferred.pending_sections) - len(first.index.pending_sections))
        same += answers[0] == answers[1]
    print(
        f"{len(queries)} dev requests over {len(skills)} skills: the same plan and pointers "
        f"for {same} ({same / len(queries):.1%}); a deferred first route embedded the "
        f"sections of {statistics.mean(filled):.1f} skills on average (of {len(skills)})"
    )
    keys = ["hit@1", "hit@3", "selected", "no-skill P", "no-skill R", "clean", "covered",
            "p50 ms", "p95 ms"]  # fmt: skip
    for name, run in runs.items():
        m = run.metrics(queries)
        print(f"  {name:22s} " + " ".join(f"{k} {m[k]:.3f}" for k in keys))
    store.close()


def report(label: str, size: int, runs: list[tuple[float, float, float, float]], texts: int,
           tokens: int) -> None:  # fmt: skip
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    rss = max(r[2] for r in runs)
    whole = statistics.median(r[3] for r in runs)
    target_s, target_mb = TARGETS[size]
    print(
        f"{label}: first route wall {wall:.1f} s (target <= {target_s:.0f} s), CPU {cpu:.1f} "
        f"s, peak RSS {rss:.0f} MB (target <= {target_mb:.0f} MB); whole index saved after "
        f"{whole:.1f} s ({texts:,} texts, {tokens:,} tokens); {len(runs)} run(s); load "
        f"average now {os.getloadavg()[0]:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--skills", choices=("both", "213", "1000"), default="both")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument(
        "--whole", action="store_true", help="the route builds the whole index (no deferral)"
    )
    ap.add_argument(
        "--agreement",
        action="store_true",
        help="only compare deferred first routes with the whole index on the dev requests",
    )
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    if args.agreement:
        agreement(args)
        return
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp:
        work = Path(tmp)
        if args.skills in ("both", "213"):
            skills = real_skills(args.datasets, args.corpora)
            catalog = ["--catalog", str(real_skills_catalogue(args.datasets)),
                       "--base", str(args.corpora)]  # fmt: skip
            runs = [first_route(catalog, work / f"state-213-{k}", whole=args.whole)
                    for k in range(args.runs)]  # fmt: skip
            report(f"{len(skills)} dev skills", 213, runs, *embedded(list(skills)))
        if args.skills in ("both", "1000"):
            from skillrt.config import DiscoveryConfig, RootConfig
            from skillrt.skills.registry import SkillRegistry

            root = work / "real1000"
            build_real_catalogue(root, 1_000, seed=0)
            runs = [first_route(["--root", str(root)], work / f"state-1000-{k}", whole=args.whole)
                    for k in range(args.runs)]  # fmt: skip
            registry = SkillRegistry.discover(
                DiscoveryConfig(conventional_roots=False),
                project_dir=work,
                explicit_roots=(RootConfig(root),),
            )
            report(f"{len(registry)} real skills", 1000, runs, *embedded(registry.skills()))


if __name__ == "__main__":
    main()
