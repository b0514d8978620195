"""The benchmark catalogue generator writes valid, discoverable, distinct skills."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.skills.registry import SkillRegistry

GEN = Path(__file__).resolve().parents[2] / "bench" / "gen_skills.py"


def gen_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_skills", GEN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_skills", module)
    spec.loader.exec_module(module)
    return module


def test_generated_catalogue_is_valid_and_deterministic(tmp_path: Path) -> None:
    gen = gen_module()
    roots = gen.generate_roots(tmp_path / "cat", 120, per_root=50)
    assert len(roots) == 3
    cfg = DiscoveryConfig(conventional_roots=False)
    reg = SkillRegistry.discover(
        cfg, project_dir=tmp_path, explicit_roots=tuple(RootConfig(r) for r in roots)
    )
    assert len(reg) == 120 and reg.broken == () and reg.shadowed == ()
    assert reg.diagnostics == ()
    assert all(s.diagnostics == () for s in reg.skills())
    assert any(s.namespace for s in reg.skills())  # some skills sit in plugins
    assert any(s.routing.prerequisites.bins for s in reg.skills())
    specs = [
        *gen.iter_specs(50, start=0),
        *gen.iter_specs(50, start=50),
        *gen.iter_specs(20, start=100),
    ]
    assert {s.qualified_name for s in specs} == {s.qualified_name for s in reg.skills()}
    assert [s.name for s in gen.iter_specs(20)] == [s.name for s in gen.iter_specs(20)]


def test_jsonl_catalogue(tmp_path: Path) -> None:
    from skillrt.eval.datasets import load_catalog

    gen = gen_module()
    path = tmp_path / "skills.jsonl"
    assert gen.write_jsonl(path, gen.iter_specs(25)) == 25
    skills = load_catalog(path)
    assert len(skills) == 25 and all(s.routing.triggers for s in skills)
