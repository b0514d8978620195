#!/usr/bin/env python3
"""Group the commits between two git refs into a release-notes draft.

Usage: changelog.py [FROM_REF] [TO_REF]
  FROM_REF defaults to the most recent tag reachable from TO_REF.
  TO_REF defaults to HEAD.

Commit subjects are parsed as Conventional Commits (`type(scope)!: subject`).
Sections and their order come from ../references/sections.json. The output is a
Markdown draft on stdout, meant to be edited by a person, not published as is.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SUBJECT = re.compile(r"^(?P<type>[a-z]+)(?:\((?P<scope>[^)]+)\))?(?P<bang>!)?: (?P<text>.+)$")
SECTIONS_FILE = Path(__file__).resolve().parent.parent / "references" / "sections.json"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def commits(from_ref: str, to_ref: str) -> list[tuple[str, str, str]]:
    out = git("log", "--no-merges", "--format=%h%x1f%s%x1f%b%x1e", f"{from_ref}..{to_ref}")
    records = []
    for record in out.split("\x1e"):
        if record.strip():
            short, subject, body = (record.strip("\n").split("\x1f") + ["", ""])[:3]
            records.append((short, subject, body))
    return records


def main(argv: list[str]) -> int:
    to_ref = argv[2] if len(argv) > 2 else "HEAD"
    if len(argv) > 1:
        from_ref = argv[1]
    else:
        try:
            from_ref = git("describe", "--tags", "--abbrev=0", to_ref).strip()
        except subprocess.CalledProcessError:
            print("no tag found; pass FROM_REF explicitly", file=sys.stderr)
            return 2
    config = json.loads(SECTIONS_FILE.read_text(encoding="utf-8"))
    by_title: dict[str, list[str]] = {s["title"]: [] for s in config["sections"]}
    by_title[config["other_title"]] = []
    type_to_title = {t: s["title"] for s in config["sections"] for t in s["types"]}
    hidden = set(config["hidden"])

    for short, subject, body in commits(from_ref, to_ref):
        match = SUBJECT.match(subject)
        if not match:
            by_title[config["other_title"]].append(f"- {subject} ({short})")
            continue
        scope = f"**{match['scope']}**: " if match["scope"] else ""
        line = f"- {scope}{match['text']} ({short})"
        if match["bang"] or "BREAKING CHANGE:" in body:
            by_title[type_to_title["!"]].append(line)
        elif match["type"] in type_to_title:
            by_title[type_to_title[match["type"]]].append(line)
        elif match["type"] not in hidden:
            by_title[config["other_title"]].append(line)

    print(f"# Release notes draft: {from_ref}..{to_ref}\n")
    for title, lines in by_title.items():
        if lines:
            print(f"## {title}\n")
            print("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
