"""Print the skills sampled for the implicit requests (fixed seed, reproducible).

python bench/data/sample_implicit.py [CATALOGUE]

Prints 120 names, a seeded sample (seed 20261127) over the sorted catalogue names. The
writer took them in this order and kept the skills whose own SKILL.md describes a
situation a person could present without naming the need (process / workflow skills);
the skipped ones and the reasons are listed in the README section.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SEED, SIZE = 20261127, 120


def main() -> None:
    # The checkout's sibling shared data folder, as sample_real_skills.py.
    default = Path(__file__).resolve().parents[3] / "shared/datasets/real-skills-dev/skills.jsonl"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("catalogue", nargs="?", type=Path, default=default)
    args = parser.parse_args()
    names = sorted(json.loads(line)["name"] for line in args.catalogue.open() if line.strip())
    for name in random.Random(SEED).sample(names, SIZE):
        print(name)


if __name__ == "__main__":
    main()
