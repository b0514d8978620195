"""A saved router index: loaded when nothing changed, rebuilt when anything did."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from skillrt.config import DiscoveryConfig, RootConfig, RoutingConfig
from skillrt.routing import snapshot as snapshot_module
from skillrt.routing.router import Router
from skillrt.skills.registry import SkillRegistry
from skillrt.store import Store, open_location

CFG = RoutingConfig(use_stats=False)
QUERIES = ("reconcile the ledger with bank statements", "compose a sonnet", "plan a deploy")


def _write(root: Path, name: str, body: str) -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Helps with {name} work.\n---\n{body}"
    )


def _tree(root: Path) -> Path:
    _write(root, "ledger", "## Reconciling\nMatch bank statements to the ledger.\n")
    _write(root, "poetry", "## Writing\nCompose sonnets and haiku.\n")
    _write(root, "deploy", "## Release\nShip the service with the checklist.\n")
    return root


def _router(root: Path, store: Store) -> Router:
    registry = SkillRegistry.discover(
        DiscoveryConfig(conventional_roots=False),
        project_dir=root,
        store=None,
        explicit_roots=(RootConfig(root, scope="flag"),),
    )
    return Router.from_skills(registry.skills(), CFG, store=store, backend="hashing")


def _answers(router: Router) -> list[tuple[str, ...]]:
    out = []
    for q in QUERIES:
        result = router.route(q, explain=True)
        out.append(tuple(f"{c.name}:{c.score.total}:{c.score.matched}" for c in result.candidates))
    return out


def test_an_unchanged_catalogue_loads_the_snapshot_and_routes_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path / "skills")
    store = open_location(tmp_path / "state" / "state.db")
    built = _router(root, store)
    saved = list((tmp_path / "state" / "router-index").glob("*.npz"))
    assert len(saved) == 1
    # A second build reads neither the fields cache nor any vector: the snapshot answers.
    monkeypatch.setattr(
        "skillrt.routing.fields.load_fields",
        lambda *a, **k: pytest.fail("fields read despite a snapshot"),
    )
    loaded = _router(root, store)
    assert loaded.index.cache.hits == loaded.index.cache.misses == 0
    assert _answers(loaded) == _answers(built)
    assert [f.sections for f in loaded.index.fields] == [f.sections for f in built.index.fields]
    store.close()


def test_a_changed_skill_gives_a_new_snapshot(tmp_path: Path) -> None:
    root = _tree(tmp_path / "skills")
    store = open_location(tmp_path / "state" / "state.db")
    _router(root, store)
    _write(root, "poetry", "## Writing\nCompose limericks about ledgers.\n")
    changed = _router(root, store)
    assert len(list((tmp_path / "state" / "router-index").glob("*.npz"))) == 2
    assert (
        "limericks"
        in changed.index.fields[[s.name for s in changed.index.skills].index("poetry")]
        .sections[0]
        .text
    )
    store.close()


def test_a_torn_snapshot_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    root = _tree(tmp_path / "skills")
    store = open_location(tmp_path / "state" / "state.db")
    expected = _answers(_router(root, store))
    (saved,) = (tmp_path / "state" / "router-index").glob("*.npz")
    saved.write_bytes(saved.read_bytes()[:1000])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = _router(root, store)
    assert any("snapshot ignored" in str(w.message) for w in caught)
    assert _answers(again) == expected
    assert saved.stat().st_size > 1000  # written again, whole
    store.close()


def test_old_snapshots_are_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_module, "KEEP", 2)
    root = _tree(tmp_path / "skills")
    store = open_location(tmp_path / "state" / "state.db")
    for n in range(4):
        _write(root, "deploy", f"## Release\nVersion {n} of the checklist.\n")
        _router(root, store)
    assert len(list((tmp_path / "state" / "router-index").glob("*.npz"))) == 2
    store.close()


def test_no_snapshot_without_a_file_store(tmp_path: Path) -> None:
    root = _tree(tmp_path / "skills")
    _router(root, open_location(":memory:"))
    assert not list(tmp_path.rglob("*.npz"))
