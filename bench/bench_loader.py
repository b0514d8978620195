"""Loader performance (issue 3): body load and a 12,000-char excerpt from a 2 MB reference.

Targets (warm process, this machine): body load p95 <= 1 ms; section excerpt p95 <= 20 ms.
Each figure is time.perf_counter over N iterations after one warm-up call. "cold"
clears the in-process content and heading caches before every call (a reference read
for the first time). "warm" is the steady state of a long-lived process: the path is
still checked, walked and opened on every call, but an unchanged file (same inode,
size, mtime and ctime) is not read, hashed and decoded again. The baseline is a plain
implementation (read, hash, split lines, loop in Python with a fence flag).

    python bench/bench_loader.py [--iterations 300]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from skillrt.config import LoaderLimits
from skillrt.loading import load_resource, load_skill_body
from skillrt.loading.cache import clear_caches
from skillrt.skills.model import Skill
from skillrt.skills.reader import read_skill

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "skills" / "code-review"
TARGET_BYTES = 2_000_000


def make_reference(path: Path, seed: int = 3) -> str:
    """A ~2 MB Markdown reference: ~400 sections, subsections, fenced code with '#' lines."""
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]
    parts = ["# Big reference\n\nHow to use this file: read one section at a time.\n\n"]
    size = len(parts[0])
    i = 0
    while size < TARGET_BYTES - 40_000:
        chunk = [f"## Topic {i}\n\n"]
        for j in range(rng.randint(1, 4)):
            chunk.append(f"### Detail {i}.{j}\n\n")
            for _ in range(rng.randint(2, 8)):
                chunk.append(" ".join(rng.choice(words) for _ in range(rng.randint(30, 90))))
                chunk.append("\n\n")
            if rng.random() < 0.3:
                chunk.append("```bash\n# a comment, not a heading\necho ok\n```\n\n")
        text = "".join(chunk)
        parts.append(text)
        size += len(text)
        i += 1
    # One long section (> 12,000 chars) in the middle, the one the bench asks for.
    long_section = "## Long section\n\n" + ("lorem ipsum dolor sit amet " * 20 + "\n\n") * 60
    parts.insert(len(parts) // 2, long_section)
    text = "".join(parts)
    text = text[: TARGET_BYTES - 1000] + "\n"
    path.write_text(text, encoding="utf-8")
    return text


_BASE_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*$")


def baseline_section(path: Path, hint: str, cap: int) -> str:
    """The plain way: read, hash, split lines, loop in Python with a fence flag."""
    data = path.read_bytes()
    hashlib.sha256(data).hexdigest()
    lines = data.decode("utf-8").replace("\r\n", "\n").split("\n")
    level, wanted = len(hint) - len(hint.lstrip("#")), hint.lstrip("#").strip().lower()
    in_fence = False
    out: list[str] = []
    capturing = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            in_fence = not in_fence
        m = None if in_fence else _BASE_ATX.match(line)
        if m and capturing and len(m.group(1)) <= level:
            break
        if m and not capturing and len(m.group(1)) == level and m.group(2).lower() == wanted:
            capturing = True
        if capturing:
            out.append(line)
    return "\n".join(out)[:cap]


def measure(fn: Callable[[], object], iterations: int) -> tuple[float, float]:
    fn()
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.95))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    args = parser.parse_args(argv)
    n = max(200, args.iterations)

    example = read_skill(EXAMPLE)
    assert isinstance(example, Skill)
    limits = LoaderLimits()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "big-ref"
        (folder / "references").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            "---\nname: big-ref\ndescription: Use for the bench.\n---\n# Big\n", encoding="utf-8"
        )
        ref_path = folder / "references" / "big.md"
        text = make_reference(ref_path)
        big = read_skill(folder)
        assert isinstance(big, Skill)
        hint = "## Long section"

        check = load_resource(big, "references/big.md", hint, limits)
        assert check.report.truncated and len(check.text) <= 12_000, check.report
        assert len(check.text) > 11_000, len(check.text)

        rows: list[tuple[str, float, float, float | None]] = []
        p50, p95 = measure(lambda: load_skill_body(example, limits), n)
        rows.append(("body load (code-review SKILL.md)", p50, p95, 1.0))

        def cold() -> None:
            clear_caches()
            load_resource(big, "references/big.md", hint, limits)

        p50, p95 = measure(lambda: load_resource(big, "references/big.md", hint, limits), n)
        rows.append(("12k-char section excerpt, 2 MB ref (warm)", p50, p95, 20.0))
        warm50, warm95 = p50, p95
        p50, p95 = measure(cold, n)
        rows.append(("12k-char section excerpt, 2 MB ref (cold)", p50, p95, None))
        cold50, cold95 = p50, p95
        p50, p95 = measure(lambda: load_resource(big, "references/big.md", None, limits), n)
        rows.append(("head excerpt + outline, 2 MB ref (warm)", p50, p95, None))
        p50, p95 = measure(lambda: load_resource(example, "references/checklist.md",
                                                 "## Security", limits), n)  # fmt: skip
        rows.append(("section of code-review checklist.md", p50, p95, None))
        b50, b95 = measure(lambda: baseline_section(ref_path, hint, 12_000), max(50, n // 4))
        rows.append(("baseline: line loop over the 2 MB ref", b50, b95, None))

    print(f"skillrt loader bench  (python {sys.version.split()[0]}, {n} iterations, "
          f"reference {len(text.encode()):,} bytes)")  # fmt: skip
    print(f"{'case':<48} {'p50 ms':>8} {'p95 ms':>8}  target")
    ok = True
    for name, p50, p95, target in rows:
        verdict = ""
        if target is not None:
            passed = p95 <= target
            ok &= passed
            verdict = f"p95 <= {target:g} ms  {'OK' if passed else 'MISSED'}"
        print(f"{name:<48} {p50:8.3f} {p95:8.3f}  {verdict}")
    print(f"section excerpt vs baseline: warm {b50 / warm50:.1f}x (p50) {b95 / warm95:.1f}x (p95); "
          f"cold {b50 / cold50:.1f}x (p50) {b95 / cold95:.1f}x (p95)")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
