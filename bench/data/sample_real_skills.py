"""Print the skills sampled for the real-skills dev queries (fixed seeds, reproducible).

python bench/data/sample_real_skills.py [--set single|multi|crowded] [CATALOGUE]

- ``single`` (default): the 104 skills of ``real-skills-dev.queries.jsonl`` (a short and
  a long request each).
- ``multi``: the first skill of each two-need request of
  ``real-skills-dev.styles.queries.jsonl`` (its writer picks the partner).
- ``crowded``: the skill each crowded one-need request of that file starts from.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SETS = {"single": (20261124, 104), "multi": (20261125, 48), "crowded": (20261126, 36)}


def main() -> None:
    default = Path(__file__).parents[2] / "../shared/datasets/real-skills-dev/skills.jsonl"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="single")
    parser.add_argument("catalogue", nargs="?", type=Path, default=default)
    args = parser.parse_args()
    seed, size = SETS[args.set]
    names = sorted(json.loads(line)["name"] for line in args.catalogue.open() if line.strip())
    for name in random.Random(seed).sample(names, size):
        print(name)


if __name__ == "__main__":
    main()
