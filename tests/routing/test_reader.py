"""The reader: features over the best candidates, a model file, its place in the route."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from skillrt.config import RoutingConfig
from skillrt.routing.reader import FEATURES, ReaderModel, features
from skillrt.routing.rerank import RerankQuery
from skillrt.routing.router import Router

from .conftest import catalogue

CFG = RoutingConfig(use_stats=False, cold_start=False, embedding_backend="hashing")
QUERY = "review my pull request for bugs"


def write_model(path: Path, weights: dict[str, float], gain: float) -> Path:
    n = len(FEATURES)
    path.write_text(
        json.dumps(
            {
                "features": list(FEATURES),
                "mean": [0.0] * n,
                "scale": [1.0] * n,
                "hidden_weights": [[] for _ in range(n)],
                "hidden_bias": [],
                "out_weights": [weights.get(f, 0.0) for f in FEATURES],
                "gain": gain,
                "card": {"seed": 0},
            }
        ),
        encoding="utf-8",
    )
    return path


def test_features_are_finite_and_relative_to_the_best() -> None:
    router = Router.from_skills(catalogue(), CFG, backend="hashing")
    index = router.index
    vector = index.backend.embed_query(QUERY)  # type: ignore[union-attr]
    rows = np.arange(len(index), dtype=np.int64)
    x = features(index, router._model(CFG), RerankQuery(QUERY, vector, None), rows)
    assert x.shape == (len(index), len(FEATURES)) and np.isfinite(x).all()
    gap = x[:, FEATURES.index("fused_gap")]
    assert gap.max() == 0.0 and (gap <= 0).all()
    assert (
        features(index, router._model(CFG), RerankQuery(QUERY, vector, None), rows[:0]).shape[0]
        == 0
    )


def test_a_reader_reorders_the_best_candidates_but_not_p_scope(tmp_path: Path) -> None:
    plain = Router.from_skills(catalogue(), CFG, backend="hashing").route(QUERY, explain=True)
    # A reader that prefers the lowest fused score, strongly: the order turns over.
    contrary = write_model(tmp_path / "r.json", {"fused": -1.0}, gain=100.0)
    cfg = RoutingConfig(**{**CFG.__dict__, "reader_weights": contrary})
    read = Router.from_skills(catalogue(), cfg, backend="hashing").route(QUERY, explain=True)
    assert read.candidates[0].name != plain.candidates[0].name
    # P(scope)'s fused evidence is read before the reader (its best candidate's own
    # signals, lexical and body, are the new best's).
    fused = {c.score.signals.get("scope_fused") for c in (plain.candidates[0], read.candidates[0])}
    assert len(fused) == 1
    # Gain 0: the router's own order.
    neutral = write_model(tmp_path / "n.json", {"fused": -1.0}, gain=0.0)
    cfg = RoutingConfig(**{**CFG.__dict__, "reader_weights": neutral})
    same = Router.from_skills(catalogue(), cfg, backend="hashing").route(QUERY)
    assert [c.name for c in same.candidates] == [c.name for c in plain.candidates]


def test_weights_of_other_features_are_refused(tmp_path: Path) -> None:
    path = write_model(tmp_path / "r.json", {}, gain=1.0)
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1] + ["something-else"]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="other features"):
        ReaderModel.load(path).score(np.zeros((2, len(FEATURES)), np.float32))
