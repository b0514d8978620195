"""Print the skills sampled for the real-skills dev queries (fixed seed, reproducible).

python bench/data/sample_real_skills.py [../shared/datasets/real-skills-dev/skills.jsonl]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

SEED = 20261124
SAMPLE_SIZE = 104


def main() -> None:
    default = Path(__file__).parents[2] / "../shared/datasets/real-skills-dev/skills.jsonl"
    catalogue = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    names = sorted(json.loads(line)["name"] for line in catalogue.open() if line.strip())
    for name in random.Random(SEED).sample(names, SAMPLE_SIZE):
        print(name)


if __name__ == "__main__":
    main()
