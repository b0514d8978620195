"""Catalogues of real SKILL.md skills, at any size, for benchmarks.

The public corpora under ``../shared/corpora`` hold a few hundred real skills. Benchmarks
that need 1,000 or 10,000 of them take every real skill once, then add remixes: a real
skill's frontmatter under a new name, its body with one section of another real skill
appended, so each remix has real wording, a real length and a text of its own (no two
skills embed to the same vector)::

    from real_catalogue import build_real_catalogue

    paths = build_real_catalogue(Path("/tmp/real1000"), 1_000, seed=0)

or ``python bench/real_catalogue.py /tmp/real1000 1000``.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"
_FRONTMATTER = re.compile(r"\A(---\r?\n)(.*?)(\r?\n---[ \t]*\r?\n?)", re.S)
_NAME_LINE = re.compile(r"^name:.*$", re.M)
_HEADING = re.compile(r"^#{2,3} ", re.M)
_SUFFIXES = (
    "lite",
    "pro",
    "team",
    "ops",
    "kit",
    "flow",
    "core",
    "plus",
    "studio",
    "lab",
)


@dataclass(frozen=True)
class RealSkill:
    """One real SKILL.md: its folder, frontmatter block and body."""

    folder: Path
    frontmatter: str
    body: str

    @property
    def slug(self) -> str:
        return self.folder.name.lower()


def real_skills(corpora: Path = DEFAULT_CORPORA) -> list[RealSkill]:
    """Every SKILL.md under ``corpora`` with a frontmatter block, in a stable order."""
    found: list[RealSkill] = []
    for path in sorted(corpora.rglob("*")):
        if path.name.lower() != "skill.md" or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        match = _FRONTMATTER.match(text)
        if match is None:
            continue
        found.append(RealSkill(path.parent, match.group(0), text[match.end() :]))
    return found


def _sections(body: str) -> list[str]:
    starts = [m.start() for m in _HEADING.finditer(body)]
    return [body[a:b] for a, b in zip(starts, [*starts[1:], len(body)], strict=False)]


def _remix(base: RealSkill, donor: RealSkill, name: str) -> str:
    frontmatter = _NAME_LINE.sub(f"name: {name}", base.frontmatter, count=1)
    donor_sections = _sections(donor.body) or [donor.body[:1500]]
    extra = donor_sections[len(name) % len(donor_sections)]
    return f"{frontmatter}{base.body.rstrip()}\n\n{extra.strip()}\n"


def build_real_catalogue(
    dest: Path, size: int, *, seed: int = 0, corpora: Path = DEFAULT_CORPORA
) -> list[Path]:
    """Write ``size`` skills under ``dest`` (replacing it): the real ones first, then remixes.

    Returns the SKILL.md paths. Real skills keep their folder (and their other Markdown
    files); remixes are ``<slug>-<suffix>-<n>`` folders holding one SKILL.md.
    """
    reals = real_skills(corpora)
    if not reals:
        raise SystemExit(f"no SKILL.md under {corpora}")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    rng = random.Random(seed)
    paths: list[Path] = []
    for index in range(size):
        base = reals[index % len(reals)]
        if index < len(reals):
            folder = dest / f"{index:05d}" / base.folder.name
            shutil.copytree(base.folder, folder)
            paths.append(next(p for p in folder.iterdir() if p.name.lower() == "skill.md"))
            continue
        donor = reals[rng.randrange(len(reals))]
        name = f"{base.slug}-{rng.choice(_SUFFIXES)}-{index}"[:64].strip("-")
        folder = dest / f"{index:05d}" / name
        folder.mkdir(parents=True)
        skill_md = folder / "SKILL.md"
        skill_md.write_text(_remix(base, donor, name), encoding="utf-8")
        paths.append(skill_md)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("size", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA)
    args = parser.parse_args(argv)
    paths = build_real_catalogue(args.dest, args.size, seed=args.seed, corpora=args.corpora)
    print(f"{len(paths)} skills under {args.dest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
