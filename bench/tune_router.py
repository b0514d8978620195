"""Fit the router's general score model on the DEV splits (never the test splits).

Five dev splits, pooled, each weighing the same whatever its size: MetaTool, CLINC150,
Seal-Tools, BFCL (tool and intent catalogues: name + description + examples) and
real-skills (real SKILL.md skills with bodies, ``bench/data/real-skills-dev.queries.jsonl``).
It reproduces the defaults in ``skillrt.routing.calibration``:

1. **Fusion** (``mix``, ``section_weight``, ``lexical_weight``, ``token_weight``): grid
   search maximising the mean top-1 over the five splits (a hit is an expected skill or
   one of the query's ``also_ok``), under the constraint that no split falls more than
   ``--max-drop`` below the ``--reference`` model's top-1.
2. **Calibration** (``bias`` and a coefficient per request signal of
   ``skillrt.routing.signals.REQUEST_SIGNALS``: ``fused``, ``lexical``, ``unknown``,
   ``question``, ``brevity``): a weighted logistic regression of "the query calls for a
   skill" on the best candidate's evidence and the query's form, over
   the splits that have no-skill queries, so ``intent_match`` keeps its meaning and the
   0.65 threshold means what it says.
3. **Sharpness**: the softmax temperature that best predicts which candidate is right.

Usage (the first run embeds every catalogue and caches features in ``--cache``)::

    python bench/tune_router.py [--datasets DIR] [--corpora DIR] [--cache DIR]

It prints the fitted parameters and the dev metrics they give at the 0.65 threshold.
Nothing from the datasets is written into the package: only these few numbers are
copied by hand into ``calibration.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import pickle
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from dev_data import (
    IMPLICIT_QUERIES,
    REAL_QUERIES,
    add_data_arguments,
    queries_of,
    real_skills_catalogue,
)

from skillrt.config import RoutingConfig
from skillrt.eval.datasets import load_catalog
from skillrt.routing.calibration import ScoreModel, fit_logistic, model_for
from skillrt.routing.evidence import LEXICAL_FLOOR
from skillrt.routing.index import FIELD_WEIGHTS
from skillrt.routing.lexical import LexicalIndex
from skillrt.routing.rerank import RERANK_DEPTH
from skillrt.routing.router import Router
from skillrt.routing.signals import REQUEST_SIGNALS, SignalInput, request_signals
from skillrt.routing.text import terms
from skillrt.store.sqlite import Store

NAMES = ("metatool", "clinc150", "seal-tools", "bfcl", "real-skills")
THRESHOLD = 0.65
FEATURE_VERSION = "v7"


#: BM25F field weights tried (name, description, examples and triggers, body); the body
#: weighs less than the description, which stays the strongest field every skill has.
FIELD_GRID = [
    (name, 1.0, examples, body)
    for name in (1.0, 2.0, 3.0)
    for examples in (0.5, 1.0)
    for body in (0.25, 0.5)
]


@dataclass
class Split:
    """Dense per-query x per-row evidence of one dev split (rows padded with NaN).

    BFCL queries route within their own candidates, so rows differ per query; the
    others route over the whole catalogue.
    """

    gold: np.ndarray  # bool (queries, rows): expected or also_ok
    valid: np.ndarray  # bool (queries, rows)
    doc: np.ndarray
    part: np.ndarray
    cent: np.ndarray
    section: np.ndarray
    #: Normalised BM25F per field-weight setting of FIELD_GRID.
    lex: dict[tuple[float, ...], np.ndarray]
    unknown: np.ndarray  # (queries,)
    tok: np.ndarray | None  # token-matching score of every row, or None
    body: np.ndarray  # bool (queries, rows): the row's skill has body sections
    #: Each query's text (set when the split is loaded), for the request signals.
    texts: list[str] | None = None

    @property
    def in_scope(self) -> np.ndarray:
        return np.asarray(self.gold.any(axis=1))


def dataset_files(
    name: str, datasets: Path, corpora: Path
) -> tuple[Path, tuple[Path, ...], Path | None]:
    if name == "real-skills":
        return real_skills_catalogue(datasets), REAL_QUERIES, corpora
    if name == "real-skills-implicit":
        return real_skills_catalogue(datasets), (*REAL_QUERIES, *IMPLICIT_QUERIES), corpora
    return datasets / name / "skills.jsonl", (datasets / name / "queries.dev.jsonl",), None


def collect(
    name: str, datasets: Path, corpora: Path, cache: Path, backend: str, limit: int | None
) -> Split:
    catalogue, query_files, base = dataset_files(name, datasets, corpora)
    skills = load_catalog(catalogue, base=base)
    queries = queries_of(query_files, limit)
    store = Store(cache / "vectors.db")
    router = Router.from_skills(
        skills, RoutingConfig(use_stats=False, cold_start=False), backend=backend, store=store
    )
    index = router.index
    lexicals = {
        w: LexicalIndex([f.field_terms for f in index.fields], weights=w) for w in FIELD_GRID
    }
    rows_of = []
    for q in queries:
        rows = np.arange(len(index), dtype=np.int64)
        if q.candidates is not None:
            rows, _ = index.rows_for(q.candidates)
        rows_of.append(rows)
    width = max(len(r) for r in rows_of)
    shape = (len(queries), width)

    def empty() -> np.ndarray:
        return np.full(shape, np.nan, dtype=np.float32)

    split = Split(
        np.zeros(shape, dtype=bool),
        np.zeros(shape, dtype=bool),
        empty(),
        empty(),
        empty(),
        empty(),
        {w: empty() for w in FIELD_GRID},
        np.zeros(len(queries)),
        empty() if index.tokens is not None else None,
        np.zeros(shape, dtype=bool),
    )
    for n, (q, rows) in enumerate(zip(queries, rows_of, strict=True)):
        k = len(rows)
        split.valid[n, :k] = True
        for array in (split.doc, split.part, split.cent, split.section):
            array[n, :k] = 0.0  # without a semantic backend, the lexical score alone
        if index.has_body is not None:
            split.body[n, :k] = index.has_body[rows]
        encoded = index.backend.encode_query(q.query) if index.backend is not None else None
        if index.semantic is not None and encoded is not None:
            sem = (
                index.semantic.score_subset(encoded.vector, rows)
                if q.candidates is not None
                else index.semantic.score(encoded.vector)
            )
            split.doc[n, :k], split.part[n, :k] = sem.doc, sem.part
            split.cent[n, :k], split.section[n, :k] = sem.centroid, sem.section
        query_terms = terms(q.query)
        for w, lexical in lexicals.items():
            scores = lexical.score(query_terms)
            split.lex[w][n, :k] = scores.norm[rows]
            split.unknown[n] = scores.unknown_share
        pos = {int(r): j for j, r in enumerate(rows.tolist())}
        for e in (*q.expected, *q.also_ok):
            if e in index.position and index.position[e] in pos:
                split.gold[n, pos[index.position[e]]] = True
        if split.tok is not None and encoded is not None and encoded.tokens is not None:
            assert index.tokens is not None
            split.tok[n, :k] = index.tokens.score(encoded.tokens, rows)
    store.close()
    return split


@dataclass(frozen=True)
class Fusion:
    mix: tuple[float, float, float]
    section: float
    lam: float
    tok: float
    fields: tuple[float, ...] = FIELD_WEIGHTS
    #: lexical and token weights for skills with a body (None: as without).
    lam_body: float | None = None
    tok_body: float | None = None

    def scores(self, s: Split) -> np.ndarray:
        """The router's fused score (``evidence.gather``), rerank included; -inf padding."""
        return self.both(s)[0]

    def both(self, s: Split) -> tuple[np.ndarray, np.ndarray]:
        """The ranking score and its skill-kind-neutral twin (the evidence of P(scope)):
        the same, with every skill weighed as one without a body (``Evidence.scope``)."""
        m = self.mix
        base = m[0] * s.doc + m[1] * s.part + m[2] * s.cent + self.section * s.section
        rel = relative(s.lex[self.fields], s.valid)
        lam = self.lam if self.lam_body is None else np.where(s.body, self.lam_body, self.lam)
        ranked = np.where(s.valid, base + lam * rel, -np.inf)
        neutral = np.where(s.valid, base + self.lam * rel, -np.inf)
        tok = self.tok if self.tok_body is None else np.where(s.body, self.tok_body, self.tok)
        if not np.any(tok) or s.tok is None:
            return ranked, neutral
        k = min(RERANK_DEPTH, ranked.shape[1])
        top = np.argpartition(-ranked, k - 1, axis=1)[:, :k]
        tok_top = np.take_along_axis(np.nan_to_num(s.tok, nan=0.0), top, axis=1)
        tok_top = np.where(np.take_along_axis(s.valid, top, axis=1), tok_top, np.inf)
        floor = tok_top.min(axis=1, keepdims=True)
        adj = np.repeat(floor, ranked.shape[1], axis=1)
        np.put_along_axis(adj, top, np.where(np.isinf(tok_top), floor, tok_top), axis=1)
        return ranked + tok * adj, neutral + self.tok * adj


def relative(lex: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Each row's BM25F relative to its best match (``evidence.relative_lexical``)."""
    best = np.nanmax(np.where(valid, lex, np.nan), axis=1, keepdims=True)
    return np.asarray(lex / np.maximum(np.nan_to_num(best), LEXICAL_FLOOR))


def top1(s: Split, fusion: Fusion) -> float:
    best = np.argmax(fusion.scores(s), axis=1)
    hit = s.gold[np.arange(len(best)), best]
    scope = s.in_scope
    return float(hit[scope].mean()) if scope.any() else float("nan")


def fusion_of(model: ScoreModel) -> Fusion:
    return Fusion(
        model.mix,
        model.section_weight,
        model.lexical_weight,
        model.token_weight,
        FIELD_WEIGHTS,
        model.body_lexical_weight,
        model.body_token_weight,
    )


def search(
    data: dict[str, Split], floor: dict[str, float], start: Fusion, *, fit_fields: bool = True
) -> Fusion | None:
    """Coordinate ascent on the mean top-1 over the splits, every split at its floor.

    From ``start``, each parameter in turn takes the grid value that scores best with
    the others fixed; passes repeat until none moves.
    """
    steps = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    grid: dict[str, list[object]] = {
        "fields": list(FIELD_GRID),
        "mix": [
            (a, b, round(1.0 - a - b, 2)) for a, b in itertools.product(steps, steps) if a + b <= 1
        ],
        "section": [0.0, 0.1, 0.25, 0.5, 0.75, 1.0],
        "lam": [0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3, 1.6, 2.0, 2.5, 3.0],
        "tok": [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
        "lam_body": [None, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3],
        "tok_body": [None, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
    }
    if not any(d.body.any() for d in data.values()):
        del grid["lam_body"], grid["tok_body"]
    if not fit_fields:
        del grid["fields"]
    memo: dict[Fusion, float | None] = {}

    def objective(fusion: Fusion) -> float | None:
        if fusion not in memo:
            per = []
            for name, d in data.items():
                value = top1(d, fusion)
                if value < floor[name]:
                    memo[fusion] = None
                    break
                per.append(value)
            else:
                memo[fusion] = float(np.mean(per))
        return memo[fusion]

    current = start
    best = objective(current)
    for _ in range(6):
        moved = False
        for key, values in grid.items():
            for value in values:
                candidate = dataclasses.replace(current, **{key: value})
                score = objective(candidate)
                if score is not None and (best is None or score > best + 1e-9):
                    current, best, moved = candidate, score, True
        if not moved:
            break
    return current if best is not None else None


def top_rows(s: Split, fusion: Fusion) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Calibration rows: (request signals of the query, top candidate right, in scope).

    The signals are those of ``Evidence`` (``skillrt.routing.signals``, in registry
    order): the best kind-neutral fused score, the best-ranked candidate's normalised
    BM25F, the share of unknown query words, whether that candidate has a body, and the
    request's form.
    """
    scores, neutral = fusion.both(s)
    best = np.argmax(scores, axis=1)
    at = np.arange(len(best))
    assert s.texts is not None
    scope, lexical = neutral.max(axis=1), s.lex[fusion.fields][at, best]
    body = s.body[at, best]
    rows = [
        request_signals(
            SignalInput(
                text, float(scope[n]), float(lexical[n]), float(s.unknown[n]), float(body[n])
            )
        )
        for n, text in enumerate(s.texts)
    ]
    x = np.asarray([[r[sig.name] for sig in REQUEST_SIGNALS] for r in rows], dtype=np.float64)
    return x, s.gold[at, best].astype(float), s.in_scope


#: Dev top-1 of the router before body fields (``skillrt eval``, commit 5027136): no split
#: may fall more than ``--max-drop`` below it.
PREVIOUS_TOP1 = {"metatool": 0.589, "clinc150": 0.806, "seal-tools": 0.888, "bfcl": 0.925}


def fit_overlap(datasets: Path, corpora: Path, cache: Path, backend: str) -> float:
    """The document similarity at which two skills overlap, for ``ScoreModel.overlap``.

    Over the real-skills dev catalogue: pairs of equally right skills (a one-need
    request's expected skill and each of its ``also_ok``) should overlap; the two skills
    of a two-need request (distinct procedures, each needed) should not. The threshold
    maximises the balanced accuracy of that split.
    """
    catalogue, query_files, base = dataset_files("real-skills", datasets, corpora)
    store = Store(cache / "vectors.db")
    router = Router.from_skills(
        load_catalog(catalogue, base=base),
        RoutingConfig(use_stats=False, cold_start=False),
        backend=None if backend == "lexical" else backend,
        store=store,
    )
    index = router.index
    equal: set[tuple[str, str]] = set()
    distinct: set[tuple[str, str]] = set()
    for q in queries_of(query_files):
        if len(q.expected) == 1:
            equal |= {(q.expected[0], other) for other in q.also_ok}
        elif len(q.expected) == 2:
            distinct.add((q.expected[0], q.expected[1]))

    def similarity(pairs: set[tuple[str, str]]) -> np.ndarray:
        known = [(a, b) for a, b in pairs if a in index.position and b in index.position]
        return np.asarray([index.overlap(index.position[a], index.position[b]) for a, b in known])

    eq, ds = similarity(equal), similarity(distinct)
    store.close()
    grid = np.round(np.arange(0.05, 1.0, 0.01), 2)
    score = [(np.mean(eq >= t) + np.mean(ds < t)) / 2 for t in grid]
    best = float(grid[int(np.argmax(score))])
    print(
        f"overlap={best} ({len(eq)} equal pairs: {np.mean(eq >= best):.2f} overlap; "
        f"{len(ds)} two-need pairs: {np.mean(ds >= best):.2f} overlap)"
    )
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--backend", default="onnx-minilm")
    ap.add_argument("--limit", type=int, default=None, help="queries per dataset (debug)")
    ap.add_argument("--max-drop", type=float, default=0.01, help="top-1 any split may lose")
    ap.add_argument("--fields", help="pin the BM25F field weights, e.g. 2,1,1,0.5")
    ap.add_argument(
        "--fusion",
        help="a fusion to calibrate instead of searching one, as JSON: "
        '{"mix": [..], "section": .., "lam": .., "tok": .., "lam_body": .., "tok_body": ..}',
    )
    ap.add_argument(
        "--form",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="weigh the request's form (question, brevity) in P(scope)",
    )
    ap.add_argument(
        "--tokens",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fit the model with token matching (catalogues within token_match_max_texts)",
    )
    ap.add_argument(
        "--implicit",
        action="store_true",
        help="fit on the real-skills implicit requests too (bench/data/*.implicit.*)",
    )
    ap.add_argument(
        "--overlap-only",
        action="store_true",
        help="only fit ScoreModel.overlap (the real-skills dev catalogue's pairs)",
    )
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.overlap_only:
        fit_overlap(args.datasets, args.corpora, args.cache, args.backend)
        return

    data: dict[str, Split] = {}
    names = [
        n if n != "real-skills" or not args.implicit else "real-skills-implicit" for n in NAMES
    ]
    for name in names:
        started = time.time()
        saved = args.cache / f"features-{FEATURE_VERSION}-{name}-{args.backend}-{args.limit}.pkl"
        if saved.exists():
            data[name] = pickle.loads(saved.read_bytes())
        else:
            data[name] = collect(
                name, args.datasets, args.corpora, args.cache, args.backend, args.limit
            )
            saved.write_bytes(pickle.dumps(data[name]))
        _, query_files, _ = dataset_files(name, args.datasets, args.corpora)
        data[name].texts = [q.query for q in queries_of(query_files, args.limit)]
        print(f"{name}: {len(data[name].unknown)} dev queries ({time.time() - started:.0f}s)")

    current = fusion_of(model_for(args.backend, tokens=args.tokens))
    print("current:  " + "  ".join(f"{n} {top1(d, current):.3f}" for n, d in data.items()))
    floor = {n: PREVIOUS_TOP1.get(n, 0.0) - args.max_drop for n in data}
    if not args.tokens:
        for d in data.values():
            d.tok = None
    starts = [
        current,
        Fusion((0.5, 0.1, 0.4), 0.0, 0.3, 0.8),
        Fusion((0.3, 0.0, 0.7), 0.5, 0.3, 1.0),
        Fusion((0.4, 0.2, 0.4), 0.25, 0.6, 0.6, (3.0, 1.0, 0.5, 0.5)),
    ]
    if args.fusion:
        spec = json.loads(args.fusion)
        spec["mix"] = tuple(spec["mix"])
        spec["fields"] = tuple(spec.get("fields", FIELD_WEIGHTS))
        starts = [Fusion(**spec)]
    if args.fields:
        pinned = tuple(float(v) for v in args.fields.split(","))
        starts = [dataclasses.replace(s, fields=pinned) for s in starts]
    if args.fusion:
        found = starts  # given, not searched: report and calibrate it
    else:
        found = [
            f
            for f in (search(data, floor, s, fit_fields=not args.fields) for s in starts)
            if f is not None
        ]
    if not found:
        raise SystemExit("no fusion keeps every split within --max-drop")
    fusion = max(found, key=lambda f: float(np.mean([top1(d, f) for d in data.values()])))
    if not args.tokens:
        fusion = dataclasses.replace(fusion, tok=0.0)
    print(
        f"fusion: fields={fusion.fields} mix={fusion.mix} section_weight={fusion.section} "
        f"lexical_weight={fusion.lam} token_weight={fusion.tok} "
        f"body_lexical_weight={fusion.lam_body} body_token_weight={fusion.tok_body}"
    )
    print("top-1:    " + "  ".join(f"{n} {top1(d, fusion):.3f}" for n, d in data.items()))

    rows = {name: top_rows(d, fusion) for name, d in data.items()}
    labelled = [r for r in rows.values() if r[2].any() and not r[2].all()]
    x_all = np.vstack([x for x, _, _ in labelled])
    y_all = np.concatenate([scope.astype(float) for _, _, scope in labelled])
    w_all = np.concatenate([np.full(len(x), 1.0 / len(x)) for x, _, _ in labelled])
    names = [sig.name for sig in REQUEST_SIGNALS]
    if not args.form:  # the lexical and hashing models leave the request's form out
        keep = [n for n, sig in enumerate(REQUEST_SIGNALS) if sig.on_clauses]
        x_all = x_all[:, keep]
        names = [names[n] for n in keep]
        rows = {k: (x[:, keep], y, scope) for k, (x, y, scope) in rows.items()}
    beta = fit_logistic(x_all, y_all, sample_weight=w_all * len(y_all) / len(labelled))
    coefficients = ", ".join(f'"{k}": {v:.3f}' for k, v in zip(names, beta[1:], strict=True))
    print(f"calibration: bias={beta[0]:.3f}, coefficients={{{coefficients}}}")

    best_tau, best_ll = 0.0, -np.inf
    for tau in [5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 100]:
        ll = []
        for d in data.values():
            scores = fusion.scores(d)
            z = tau * (scores - scores.max(axis=1, keepdims=True))
            z = np.where(d.valid, z, -np.inf)
            single = d.gold.sum(axis=1) == 1
            if not single.any():
                continue
            log_norm = np.log(np.exp(z[single]).sum(axis=1))
            ll.append(float(np.mean(z[single][d.gold[single]] - log_norm)))
        if np.mean(ll) > best_ll:
            best_tau, best_ll = float(tau), float(np.mean(ll))
    print(f"sharpness={best_tau}")

    for name, (x, y, scope) in rows.items():
        p = 1 / (1 + np.exp(-(beta[0] + x @ beta[1:])))
        select = p >= THRESHOLD
        tp = np.sum(~select & ~scope)
        ns_p = tp / max(1, np.sum(~select))
        ns_r = tp / max(1, np.sum(~scope)) if np.any(~scope) else float("nan")
        in_scope = float(np.mean(((y == 1) & select)[scope])) if np.any(scope) else float("nan")
        print(f"  {name:11s} selected acc {in_scope:.3f}  no-skill P {ns_p:.3f} R {ns_r:.3f}")


if __name__ == "__main__":
    main()
