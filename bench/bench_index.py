"""A cold index: the first ``skillrt route`` over a catalogue nothing was embedded for.

    python bench/bench_index.py [--skills both|213|1000] [--runs 1] [--datasets DIR]
                                [--corpora DIR]

Each run is a fresh ``skillrt route`` process with an empty state folder (no cached
fields, vectors, token states or saved index), as a user's first command after
``install``: it reads every skill, embeds every text and saves the index. It prints the
wall time, the CPU seconds (user + system) and the peak resident memory of that process
(``wait4``), with the texts and tokens the index embeds. The embedding model's derived
query copy, made once per machine, is kept (``~/.cache/skillrt/models``).

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


def first_route(args: list[str], state: Path) -> tuple[float, float, float]:
    """One cold ``skillrt route`` process: (wall s, CPU s, peak RSS MB)."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillrt", "route", QUERY, *args, "--state", str(state),
             "--json", "--no-daemon"],
            stdout=out,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )  # fmt: skip
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            out.seek(0)
            raise SystemExit(f"skillrt route failed: {out.read()[:500]!r}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


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


def report(label: str, size: int, runs: list[tuple[float, float, float]], texts: int,
           tokens: int) -> None:  # fmt: skip
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    rss = max(r[2] for r in runs)
    target_s, target_mb = TARGETS[size]
    print(
        f"{label}: {texts:,} texts, {tokens:,} tokens embedded; wall {wall:.1f} s "
        f"(target <= {target_s:.0f} s), CPU {cpu:.1f} s, peak RSS {rss:.0f} MB "
        f"(target <= {target_mb:.0f} MB); {len(runs)} run(s)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--skills", choices=("both", "213", "1000"), default="both")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp:
        work = Path(tmp)
        if args.skills in ("both", "213"):
            skills = real_skills(args.datasets, args.corpora)
            catalog = ["--catalog", str(real_skills_catalogue(args.datasets)),
                       "--base", str(args.corpora)]  # fmt: skip
            runs = [first_route(catalog, work / f"state-213-{k}") for k in range(args.runs)]
            report(f"{len(skills)} dev skills", 213, runs, *embedded(list(skills)))
        if args.skills in ("both", "1000"):
            from skillrt.config import DiscoveryConfig, RootConfig
            from skillrt.skills.registry import SkillRegistry

            root = work / "real1000"
            build_real_catalogue(root, 1_000, seed=0)
            runs = [first_route(["--root", str(root)], work / f"state-1000-{k}")
                    for k in range(args.runs)]  # fmt: skip
            registry = SkillRegistry.discover(
                DiscoveryConfig(conventional_roots=False),
                project_dir=work,
                explicit_roots=(RootConfig(root),),
            )
            report(f"{len(registry)} real skills", 1000, runs, *embedded(registry.skills()))


if __name__ == "__main__":
    main()
