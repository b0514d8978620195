"""Synthetic skill catalogues for benchmarks: seeded, realistic, any size.

Other benches import it (``bench/`` is on ``sys.path`` when a bench runs as a script)::

    from gen_skills import generate_catalogue, iter_specs

    paths = generate_catalogue(Path("/tmp/cat"), 10_000, seed=0)

or run it to write a tree (or, with ``--jsonl``, a ``skills.jsonl`` catalogue)::

    python bench/gen_skills.py /tmp/cat 10000 [--seed 0] [--body-bytes 2000] [--flat]
    python bench/gen_skills.py /tmp/skills.jsonl 10000 --jsonl

The tree looks like real catalogues: skills grouped into category folders (depth 2-3),
a share of them inside Claude-style plugins (``.claude-plugin/plugin.json`` gives the
namespace), frontmatter with routing fields (triggers, anti_triggers, cost_hint,
prerequisites), block-scalar descriptions, and a Markdown body with sections.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

VERBS = (
    "create",
    "review",
    "deploy",
    "convert",
    "summarise",
    "debug",
    "test",
    "refactor",
    "translate",
    "analyse",
    "migrate",
    "audit",
    "format",
    "validate",
    "generate",
    "optimise",
)
OBJECTS = (
    "pull requests",
    "PDF reports",
    "Kubernetes manifests",
    "spreadsheets",
    "meeting notes",
    "unit tests",
    "SQL queries",
    "release notes",
    "Docker images",
    "API docs",
    "slide decks",
    "log files",
    "invoices",
    "Terraform plans",
    "React components",
    "CSV exports",
    "commit messages",
    "incident reports",
    "design tokens",
    "GraphQL schemas",
)
CONTEXTS = (
    "for a team",
    "with a checklist",
    "before a release",
    "from raw data",
    "in plain English",
    "for compliance",
    "against the style guide",
    "under a deadline",
    "for a code review",
    "in a monorepo",
)
CATEGORIES = (
    "engineering",
    "data",
    "docs",
    "ops",
    "design",
    "finance",
    "security",
    "writing",
    "testing",
    "product",
)
BINS = ("git", "docker", "kubectl", "jq", "psql", "terraform", "node", "python3")
ENVS = ("GITHUB_TOKEN", "AWS_PROFILE", "DATABASE_URL", "OPENAI_API_KEY")


@dataclass(frozen=True)
class SkillSpec:
    """One synthetic skill: where it goes and what its SKILL.md says."""

    name: str
    description: str
    #: Folder of the skill relative to the catalogue root.
    rel_dir: str
    namespace: str | None
    triggers: tuple[str, ...]
    anti_triggers: tuple[str, ...]
    cost_hint: str
    bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    parallel_safe: bool = False
    block_description: bool = False
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}:{self.name}" if self.namespace else self.name


def iter_specs(
    n: int, *, seed: int = 0, plugin_share: float = 0.1, flat: bool = False, start: int = 0
) -> Iterator[SkillSpec]:
    """Yield ``n`` distinct skill specs; the same seed gives the same catalogue.

    Names carry the index (``start`` upwards), so catalogues written with disjoint
    ranges never collide.
    """
    rng = random.Random(seed * 1_000_003 + start)
    plugins = max(1, n // 500)
    for i in range(start, start + n):
        verb, obj, ctx = rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(CONTEXTS)
        slug = "-".join(w.lower() for w in f"{verb} {obj}".split())
        name = f"{slug}-{i:06d}"
        description = (
            f"Use when you need to {verb} {obj} {ctx}. Handles the usual edge cases, "
            f"explains each step and checks the result. Not for {rng.choice(OBJECTS)}."
        )
        category = CATEGORIES[i % len(CATEGORIES)]
        namespace = None
        if flat:
            rel = name
        elif rng.random() < plugin_share:
            plugin = f"plugin-{i % plugins:03d}"
            namespace = plugin
            rel = f"plugins/{plugin}/skills/{name}"
        else:
            rel = f"{category}/{verb}/{name}"
        yield SkillSpec(
            name=name,
            description=description,
            rel_dir=rel,
            namespace=namespace,
            triggers=(f"{verb} {obj}", f"{verb} the {obj.split()[-1]}"),
            anti_triggers=(f"explain {obj}",),
            cost_hint=rng.choice(("low", "medium", "high")),
            bins=tuple(rng.sample(BINS, rng.randint(0, 2))),
            env=tuple(rng.sample(ENVS, rng.randint(0, 1))),
            parallel_safe=rng.random() < 0.3,
            block_description=rng.random() < 0.2,
            extra={"author": f"team-{category}", "version": f"1.{i % 10}"},
        )


def render_skill_md(spec: SkillSpec, *, body_bytes: int = 2000) -> str:
    """The SKILL.md text of ``spec``: frontmatter plus a body of about ``body_bytes``."""
    lines = ["---", f"name: {spec.name}"]
    if spec.block_description:
        lines += ["description: >-", f"  {spec.description}"]
    else:
        lines.append(f"description: {json.dumps(spec.description)}")
    lines += [
        "license: Apache-2.0",
        "metadata:",
        *(f"  {k}: {json.dumps(v)}" for k, v in spec.extra.items()),
        "triggers:",
        *(f"  - {json.dumps(t)}" for t in spec.triggers),
        "anti_triggers:",
        *(f"  - {json.dumps(t)}" for t in spec.anti_triggers),
        f"cost_hint: {spec.cost_hint}",
    ]
    if spec.bins or spec.env:
        lines.append("prerequisites:")
        if spec.bins:
            lines.append(f"  bins: [{', '.join(spec.bins)}]")
        if spec.env:
            lines.append(f"  env: [{', '.join(spec.env)}]")
    lines += [f"parallel_safe: {'true' if spec.parallel_safe else 'false'}", "---", ""]
    body = [
        f"# {spec.name}",
        "",
        "## Overview",
        spec.description,
        "",
        "## Steps",
    ]
    step = 1
    while sum(len(x) + 1 for x in body) < body_bytes:
        body.append(f"{step}. Check the input, then {spec.triggers[0]} and record the outcome.")
        step += 1
    body += ["", "## Acceptance", "- The result is checked.", ""]
    return "\n".join(lines + body)


def write_catalogue(
    root: Path, specs: list[SkillSpec] | Iterator[SkillSpec], *, body_bytes: int = 2000
) -> list[Path]:
    """Write ``specs`` under ``root`` (plugin manifests included); return the skill dirs."""
    root.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    plugins: set[str] = set()
    for spec in specs:
        skill_dir = root / spec.rel_dir
        skill_dir.mkdir(parents=True, exist_ok=True)
        (skill_dir / "SKILL.md").write_text(
            render_skill_md(spec, body_bytes=body_bytes), encoding="utf-8"
        )
        if spec.namespace and spec.namespace not in plugins:
            plugins.add(spec.namespace)
            manifest = root / "plugins" / spec.namespace / ".claude-plugin" / "plugin.json"
            manifest.parent.mkdir(parents=True, exist_ok=True)
            manifest.write_text(json.dumps({"name": spec.namespace, "version": "1.0.0"}))
        out.append(skill_dir)
    return out


def generate_catalogue(
    root: Path,
    n: int,
    *,
    seed: int = 0,
    body_bytes: int = 2000,
    plugin_share: float = 0.1,
    flat: bool = False,
    start: int = 0,
) -> list[Path]:
    """Write ``n`` generated skills under ``root``; return their folders."""
    specs = iter_specs(n, seed=seed, plugin_share=plugin_share, flat=flat, start=start)
    return write_catalogue(root, specs, body_bytes=body_bytes)


def spec_record(spec: SkillSpec) -> dict[str, object]:
    """A ``skills.jsonl`` record of ``spec`` (the shape ``skillrt.eval`` catalogues use)."""
    record: dict[str, object] = {
        "name": spec.name,
        "description": spec.description,
        "triggers": list(spec.triggers),
        "anti_triggers": list(spec.anti_triggers),
        "cost_hint": spec.cost_hint,
        "parallel_safe": spec.parallel_safe,
    }
    if spec.namespace:
        record["namespace"] = spec.namespace
    if spec.bins or spec.env:
        record["prerequisites"] = {"bins": list(spec.bins), "env": list(spec.env)}
    return record


def write_jsonl(path: Path, specs: list[SkillSpec] | Iterator[SkillSpec]) -> int:
    """Write ``specs`` as a JSONL catalogue (no folders); return the number written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as fh:
        for spec in specs:
            fh.write(json.dumps(spec_record(spec), ensure_ascii=False) + "\n")
            count += 1
    return count


def generate_roots(
    base: Path, n: int, *, per_root: int = 1000, seed: int = 0, body_bytes: int = 2000
) -> list[Path]:
    """Write ``n`` skills split over roots of ``per_root`` skills (S3 caps a root at 2000
    folders); return the root folders ``base/root-000``, ``base/root-001``, ..."""
    roots: list[Path] = []
    for k, start in enumerate(range(0, n, per_root)):
        root = base / f"root-{k:03d}"
        generate_catalogue(
            root, min(per_root, n - start), seed=seed, body_bytes=body_bytes, start=start
        )
        roots.append(root)
    return roots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("root", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--body-bytes", type=int, default=2000)
    parser.add_argument("--plugin-share", type=float, default=0.1)
    parser.add_argument("--flat", action="store_true", help="every skill directly under root")
    parser.add_argument(
        "--jsonl", action="store_true", help="write ROOT as a skills.jsonl file, not folders"
    )
    args = parser.parse_args(argv)
    if args.jsonl:
        specs = iter_specs(args.n, seed=args.seed, plugin_share=args.plugin_share)
        print(f"wrote {write_jsonl(args.root, specs)} records to {args.root}")
        return 0
    dirs = generate_catalogue(
        args.root,
        args.n,
        seed=args.seed,
        body_bytes=args.body_bytes,
        plugin_share=args.plugin_share,
        flat=args.flat,
    )
    print(f"wrote {len(dirs)} skills under {args.root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
