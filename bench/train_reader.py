"""Train and measure the reader (``skillrt.routing.reader``) from data that looks like use.

Training data, never the dev requests: pseudo-requests drawn from every real skill's own
text (``skillrt.doctor.pseudo``: description clauses, examples, the first sentences of
each body section), each routed through the doctor's leave-out router that has not
indexed the text it came from (``skillrt.doctor.folds``), so it behaves like a request
in a user's words; each is also rewritten into a terse form (lower case, cut to its
first words, no final stop) as people type. The candidates are the router's own best
``--depth`` (hard negatives); the label is the skill the text came from.

Validation: the real-skills dev requests (``bench/data/real-skills-dev*.jsonl``, with
``also_ok``), routed by the full router, never trained on. Both are split by skill into
two halves with a fixed seed: a model trained on one half's pseudo-requests is measured
on the dev requests whose expected skill is in the other half, so what it learned of a
skill's own texts never meets that skill's dev requests.

It prints hit@1 of the router's own order and of the reader (and of their blends) on the
dev requests, per file, and writes the weights trained on all pseudo-requests with
``--write PATH`` (JSON with its model card)::

    python bench/train_reader.py [--datasets DIR] [--corpora DIR] [--cache DIR]
                                 [--seed 29] [--hidden 16] [--epochs 60] [--write PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from dev_data import (
    IMPLICIT_QUERIES,
    REAL_QUERIES,
    add_data_arguments,
    queries_of,
    real_skills,
)

from skillrt.config import RoutingConfig
from skillrt.doctor.folds import fold_router, section_terms
from skillrt.doctor.pseudo import FOLDS, pseudo_requests
from skillrt.routing.evidence import gather, top
from skillrt.routing.reader import FEATURES, features
from skillrt.routing.rerank import RerankQuery
from skillrt.routing.router import Router
from skillrt.store import open_location

DATA_VERSION = "r1"
CONFIG = RoutingConfig(use_stats=False, cold_start=False)


@dataclass
class Lists:
    """Per request: the candidates' features (depth, F), which are right, and meta."""

    x: list[np.ndarray]
    gold: list[np.ndarray]
    fused: list[np.ndarray]
    skill: list[str]  # the expected skill (pseudo: the source skill)
    kind: list[str]  # pseudo: its form; dev: its file's style


def terse(text: str, words: int = 14) -> str:
    """The form people type: lower case, the first words, no final stop."""
    cut = " ".join(text.split()[:words]).lower()
    return cut.rstrip(".!;:")


def route_lists(router: Router, texts: Sequence[str], depth: int) -> list[dict[str, Any]]:
    """The router's best ``depth`` candidates of each text, with the reader's features."""
    index = router.index
    model = router._model(router.config)
    out = []
    for text in texts:
        encoded = router._encode_query(text, ())
        query = RerankQuery(text, encoded.vector, encoded.tokens)
        ev = gather(index, model, text, encoded.vector, None, reranker=router.reranker,
                    rerank_query=query)  # fmt: skip
        best = top(ev.fused, depth)
        rows = ev.rows[best]
        out.append(
            {"rows": rows, "fused": ev.fused[best], "x": features(index, model, query, rows)}
        )
    return out


def collect(args: argparse.Namespace) -> tuple[Lists, Lists, list[str]]:
    saved = args.cache / f"reader-{DATA_VERSION}-{args.depth}-{args.per_skill}.pkl"
    if saved.exists():
        data: tuple[Lists, Lists, list[str]] = pickle.loads(saved.read_bytes())
        for lists in data[:2]:  # a cache from before the fused columns: the router's own
            for n, x in enumerate(lists.x):
                if x.shape[1] == len(FEATURES) - 2:
                    f = lists.fused[n][:, None]
                    lists.x[n] = np.concatenate([x, f, f - f.max()], axis=1)
        return data
    skills = real_skills(args.datasets, args.corpora)
    store = open_location(args.cache / "vectors.db")
    full = Router.from_skills(skills, CONFIG, caches=store)  # vectors only: no stats
    names = full.index.names
    fields = full.index.fields
    # Pseudo-requests, each through the router of its leave-out fold.
    requests = [
        r
        for i, (s, f) in enumerate(zip(full.index.skills, fields, strict=True))
        for r in pseudo_requests(i, s, f, limit=args.per_skill)
    ]
    pseudo = Lists([], [], [], [], [])
    per_section = section_terms(fields)
    for fold in range(FOLDS):
        mine = [r for r in requests if r.fold == fold]
        router = fold_router(full.index.skills, fields, fold, backend=full.index.backend,
                             config=CONFIG, store=store, terms_of=per_section)  # fmt: skip
        for form in ("plain", "terse"):
            texts = [r.text if form == "plain" else terse(r.text) for r in mine]
            started = time.time()
            for r, got in zip(mine, route_lists(router, texts, args.depth), strict=True):
                pseudo.x.append(got["x"])
                pseudo.gold.append(got["rows"] == r.skill)
                pseudo.fused.append(got["fused"])
                pseudo.skill.append(names[r.skill])
                pseudo.kind.append(form)
            print(f"fold {fold} {form}: {len(mine)} requests ({time.time() - started:.0f}s)",
                  flush=True)  # fmt: skip
    dev = Lists([], [], [], [], [])
    queries = queries_of((*REAL_QUERIES, *IMPLICIT_QUERIES))
    for q, got in zip(queries, route_lists(full, [q.query for q in queries], args.depth),
                      strict=True):  # fmt: skip
        right = {
            full.index.position[n] for n in (*q.expected, *q.also_ok) if n in full.index.position
        }
        dev.x.append(got["x"])
        dev.gold.append(np.isin(got["rows"], list(right)))
        dev.fused.append(got["fused"])
        dev.skill.append(q.expected[0] if len(q.expected) == 1 else "")
        dev.kind.append(str(q.meta.get("style") or ""))
    store.close()
    data = (pseudo, dev, names)
    saved.write_bytes(pickle.dumps(data))
    return data


# -- the model: one hidden layer, listwise softmax loss, Adam --------------------------------


def init(n_in: int, hidden: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    if not hidden:  # linear
        return {"w1": np.zeros((n_in, 0)), "b1": np.zeros(0), "w2": np.zeros(n_in)}
    return {
        "w1": rng.normal(0, 1 / np.sqrt(n_in), (n_in, hidden)),
        "b1": np.zeros(hidden),
        "w2": rng.normal(0, 1 / np.sqrt(hidden), hidden),
    }


def forward(p: dict[str, np.ndarray], x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if not p["w1"].shape[1]:
        return x @ p["w2"], x
    h = np.tanh(x @ p["w1"] + p["b1"])
    return h @ p["w2"], h


def train(
    x: np.ndarray, gold: np.ndarray, *, hidden: int, epochs: int, seed: int, l2: float = 1e-3
) -> dict[str, np.ndarray]:
    """Listwise: maximise the softmax probability of the right candidates of each list.
    ``x`` (lists, depth, F) standardised; ``gold`` (lists, depth) bool, each list one+."""
    rng = np.random.default_rng(seed)
    p = init(x.shape[2], hidden, rng)
    m = {k: np.zeros_like(v) for k, v in p.items()}
    v = {k: np.zeros_like(val) for k, val in p.items()}
    lr, b1, b2, step = 0.01, 0.9, 0.999, 0
    n = len(x)
    for _ in range(epochs):
        order = rng.permutation(n)
        for start in range(0, n, 128):
            idx = order[start : start + 128]
            xb, gb = x[idx], gold[idx]
            s, h = forward(p, xb)  # (b, depth)
            s = s - s.max(axis=1, keepdims=True)
            e = np.exp(s)
            prob = e / e.sum(axis=1, keepdims=True)
            target = gb / gb.sum(axis=1, keepdims=True)
            ds = (prob - target) / len(idx)  # d loss / d score
            grads = {"w2": np.einsum("bd,bdh->h", ds, h) + l2 * p["w2"]}
            if p["w1"].shape[1]:
                dh = ds[:, :, None] * p["w2"][None, None, :] * (1 - h**2)
                grads["w1"] = np.einsum("bdf,bdh->fh", xb, dh) + l2 * p["w1"]
                grads["b1"] = dh.sum(axis=(0, 1))
            else:
                grads["w1"], grads["b1"] = p["w1"], p["b1"]
            step += 1
            for k in p:
                m[k] = b1 * m[k] + (1 - b1) * grads[k]
                v[k] = b2 * v[k] + (1 - b2) * grads[k] ** 2
                mh = m[k] / (1 - b1**step)
                vh = v[k] / (1 - b2**step)
                p[k] -= lr * mh / (np.sqrt(vh) + 1e-8)
    return p


GAINS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 100.0)


def blend(fused: np.ndarray, reader: np.ndarray, gain: float) -> np.ndarray:
    """What the router ranks by: its fused score plus ``gain`` x the centred reader."""
    return fused + gain * (reader - reader.mean(axis=1, keepdims=True))


def stack(lists: Lists, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.stack([lists.x[i] for i in np.flatnonzero(keep)]).astype(np.float64)
    g = np.stack([lists.gold[i] for i in np.flatnonzero(keep)])
    f = np.stack([lists.fused[i] for i in np.flatnonzero(keep)]).astype(np.float64)
    return x, g, f


def hit1(scores: np.ndarray, gold: np.ndarray) -> float:
    return float(gold[np.arange(len(gold)), scores.argmax(axis=1)].mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--per-skill", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument(
        "--features",
        default=",".join(FEATURES),
        help="the features the model reads (the others weigh 0), comma-separated",
    )
    ap.add_argument("--write", type=Path, help="write the weights trained on every pseudo-request")
    ap.add_argument("--gain", type=float, default=0.05, help="the gain written with --write")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    started = time.time()
    pseudo, dev, names = collect(args)
    print(f"{len(pseudo.x)} pseudo-request lists, {len(dev.x)} dev requests "
          f"({time.time() - started:.0f}s)")  # fmt: skip
    use = np.asarray([name in args.features.split(",") for name in FEATURES], dtype=float)
    rng = np.random.default_rng(args.seed)
    half = {n: int(b) for n, b in zip(names, rng.integers(0, 2, len(names)), strict=True)}
    pseudo_ok = np.asarray([g.any() for g in pseudo.gold])
    dev_single = np.asarray([bool(s) for s in dev.skill])
    print(f"pseudo-requests whose skill is among the router's best {args.depth}: "
          f"{pseudo_ok.mean():.3f}")  # fmt: skip
    # Per dev request: the router's order, the reader's, blends, each trained on the
    # other half's pseudo-requests.
    x_all, g_all, f_all = stack(dev, np.ones(len(dev.x), dtype=bool))
    reader_scores = np.zeros(g_all.shape)
    for h in (0, 1):
        train_on = pseudo_ok & np.asarray([half[s] != h for s in pseudo.skill])
        xt, gt, _ = stack(pseudo, train_on)
        mean = xt.reshape(-1, xt.shape[2]).mean(axis=0)
        scale = (xt.reshape(-1, xt.shape[2]).std(axis=0) + 1e-6) / use.clip(1e-9)
        params = train((xt - mean) / scale, gt, hidden=args.hidden, epochs=args.epochs,
                       seed=args.seed)  # fmt: skip
        mine = np.asarray([half.get(s, h) == h for s in dev.skill])
        reader_scores[mine] = forward(params, (x_all[mine] - mean) / scale)[0]
        pseudo_held = pseudo_ok & ~train_on
        xh, gh, fh = stack(pseudo, pseudo_held)
        ph = forward(params, (xh - mean) / scale)[0]
        curve = "  ".join(f"{g}: {hit1(blend(fh, ph, g), gh):.3f}" for g in GAINS)
        print(f"half {h}: trained on {int(train_on.sum())} lists; held-out pseudo hit@1 "
              f"by gain {curve}")  # fmt: skip
    kinds = sorted(set(dev.kind))
    groups = {"one-need (short/long/crowded)": {"short", "long", "single-crowded"},
              "implicit": {"implicit"}}  # fmt: skip
    for label, styles in groups.items():
        keep = np.asarray([k in styles for k in dev.kind]) & dev_single
        if not keep.any():
            continue
        g, f, r = g_all[keep], f_all[keep], reader_scores[keep]
        curve = "  ".join(f"{a}: {hit1(blend(f, r, a), g):.3f}" for a in GAINS)
        print(f"{label:30s} n={int(keep.sum()):3d} hit@1 by gain (0: the router) {curve}")
    del kinds
    if args.write:
        xt, gt, _ = stack(pseudo, pseudo_ok)
        mean = xt.reshape(-1, xt.shape[2]).mean(axis=0)
        scale = (xt.reshape(-1, xt.shape[2]).std(axis=0) + 1e-6) / use.clip(1e-9)
        params = train((xt - mean) / scale, gt, hidden=args.hidden, epochs=args.epochs,
                       seed=args.seed)  # fmt: skip
        body: dict[str, Any] = {
            "features": list(FEATURES),
            "mean": mean.tolist(),
            "scale": scale.tolist(),
            "hidden_weights": params["w1"].tolist(),
            "hidden_bias": params["b1"].tolist(),
            "out_weights": params["w2"].tolist(),
            "gain": args.gain,
        }
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        body["card"] = {
            "data": f"{int(pseudo_ok.sum())} pseudo-request lists (doctor pseudo-requests of "
            f"{len(names)} real skills, plain and terse, leave-out routed), depth {args.depth}",
            "seed": args.seed,
            "command": " ".join(["python", *sys.argv]),
            "weights_sha256": digest,
            "python": platform.python_version(),
            "numpy": np.__version__,
        }
        args.write.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.write} (sha256 of the weights {digest[:16]})")


if __name__ == "__main__":
    main()
