"""Pieces of the MCP layer without the SDK: URIs, files, fingerprint, tools, the lock."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillrt.config import DiscoveryConfig, LoaderLimits
from skillrt.errors import PathTraversalBlocked, UsageError
from skillrt.mcp.files import DigestCache, list_skill_files, read_skill_file
from skillrt.mcp.rwlock import RWLock
from skillrt.mcp.tools import check_arguments, tool_specs
from skillrt.mcp.uris import parse_skill_uri, skill_uri
from skillrt.mcp.watch import roots_fingerprint
from skillrt.store import open_location

SEGMENT = st.text(
    alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in (".", ".."))


@given(
    name=st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True),
    ns=st.none() | st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True),
    path=st.lists(SEGMENT, min_size=1, max_size=4).map("/".join),
)
def test_uri_round_trip(name: str, ns: str | None, path: str) -> None:
    qn = f"{ns}:{name}" if ns else name
    uri = skill_uri(qn, path)
    assert uri.startswith("skill://")
    parsed = parse_skill_uri(uri, {qn})
    assert (parsed.qualified_name, parsed.path) == (qn, path)


def test_uri_shapes() -> None:
    assert skill_uri("code-review") == "skill://code-review/SKILL.md"
    assert skill_uri("acme:gh-fix-ci", "references/a b.md") == (
        "skill://acme/gh-fix-ci/references/a%20b.md"
    )
    known = {"acme:tool", "acme"}
    # Longest match first: acme:tool wins over skill acme's file tool/SKILL.md.
    assert parse_skill_uri("skill://acme/tool/SKILL.md", known).qualified_name == "acme:tool"
    assert parse_skill_uri("skill://acme/other/x.md", known).path == "other/x.md"
    assert parse_skill_uri("skill://acme:tool/SKILL.md", known).qualified_name == "acme:tool"
    for bad in ("file:///etc/passwd", "skill://nope/SKILL.md", "skill://acme", "skill://acme/"):
        with pytest.raises(UsageError):
            parse_skill_uri(bad, known)


def test_listing_is_what_the_loader_would_serve(
    tmp_path: Path, make_skill: Callable[..., Path]
) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("secret")
    skill = make_skill(
        "s",
        files={
            "references/a.md": "# A\n",
            "references/deep/b.yaml": "k: v\n",
            "scripts/x.py": "print(1)\n",
            "assets/img.png": b"\x89PNG\x00",
            ".git/config": "x",
            "big.txt": "x" * 2000,
        },
    )
    os.symlink(outside, skill / "references" / "link.md")
    make_skill("nested", root=skill / "sub")  # a nested skill publishes its own files
    limits = LoaderLimits(max_resource_file_bytes=1000)
    files = list_skill_files(skill, limits, DigestCache())
    paths = [f.path for f in files]
    assert paths == ["SKILL.md", "references/a.md", "references/deep/b.yaml"]
    assert files[0].digest.startswith("sha256:") and len(files[0].sha256) == 64
    assert files[1].mime_type == "text/markdown"
    assert list_skill_files(skill, limits, DigestCache(), max_files=2)[-1].path == "references/a.md"


def test_read_goes_through_the_jail(tmp_path: Path, make_skill: Callable[..., Path]) -> None:
    skill = make_skill("s", files={"references/a.md": "# A\r\nline\r\n"})
    (tmp_path / "secret.md").write_text("secret")
    os.symlink(tmp_path / "secret.md", skill / "references" / "escape.md")
    text, sha = read_skill_file(skill, "references/a.md", LoaderLimits())
    assert text == "# A\r\nline\r\n"  # bytes as they are: the digest holds
    import hashlib

    assert sha == hashlib.sha256(text.encode()).hexdigest()
    for bad in ("../secret.md", "references/escape.md", "/etc/passwd", "%2e%2e/secret.md"):
        with pytest.raises(PathTraversalBlocked):
            read_skill_file(skill, bad, LoaderLimits())


def test_digest_cache_rehashes_only_changes(tmp_path: Path) -> None:
    f = tmp_path / "a.md"
    f.write_text("one")
    cache = DigestCache()
    d1 = cache.digest(f, f.stat())
    assert cache.digest(f, f.stat()) == d1
    f.write_text("two!")
    assert cache.digest(f, f.stat()) != d1


def test_fingerprint_tracks_changes(tmp_path: Path, make_skill: Callable[..., Path]) -> None:
    root = tmp_path / "skills"
    make_skill("a", files={"references/r.md": "x"})
    store = open_location(tmp_path / "state.db")
    disc = DiscoveryConfig()

    def fp() -> str:
        return roots_fingerprint([root, tmp_path / "missing"], disc, store)

    base = fp()
    assert fp() == base  # stable when nothing changed
    make_skill("b")
    added = fp()
    assert added != base
    ref = root / "a" / "references" / "r.md"
    ref.write_text("changed!")
    os.utime(ref, ns=(time.time_ns(), time.time_ns() + 1_000_000_000))
    edited = fp()
    assert edited != added
    from skillrt.store import skill_state

    skill_state.set_enabled(store, "a", False)
    assert fp() != edited
    store.close()


def test_tool_specs_and_argument_checks() -> None:
    specs = {s.name: s for s in tool_specs(["b", "a"])}
    assert specs["load_skill"].input_schema["properties"]["name"]["enum"] == ["a", "b"]
    assert "enum" not in tool_specs([])[1].input_schema["properties"]["name"]
    read = specs["read_skill_resource"]
    assert check_arguments(read, {"name": "a", "path": "x.md"})["section"] is None
    for bad in ({"name": "a"}, {"name": 1, "path": "x"}, {"name": "a", "path": "x", "z": 1}):
        with pytest.raises(UsageError):
            check_arguments(read, bad)
    with pytest.raises(UsageError):
        check_arguments(specs["route_skills"], {"query": "   "})
    with pytest.raises(UsageError):
        check_arguments(specs["route_skills"], {"query": "x" * 100_001})


def test_rwlock_writer_excludes_readers() -> None:
    lock = RWLock()
    inside: list[str] = []
    order: list[str] = []

    def reader(i: int) -> None:
        with lock.read():
            inside.append(f"r{i}")
            time.sleep(0.01)
            assert "w" not in inside
            inside.remove(f"r{i}")

    def writer() -> None:
        with lock.write():
            inside.append("w")
            assert inside == ["w"]
            order.append("w")
            inside.remove("w")

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
    threads.insert(4, threading.Thread(target=writer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert order == ["w"] and inside == []


_VALUES = st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.lists(st.text())


@given(
    tool=st.sampled_from(["route_skills", "load_skill", "read_skill_resource", "run_skill"]),
    args=st.dictionaries(
        st.sampled_from(["query", "name", "path", "section", "skill", "task", "x"]), _VALUES
    ),
)
def test_arguments_pass_exactly_when_the_published_schema_holds(
    tool: str, args: dict[str, object]
) -> None:
    import jsonschema

    spec = {s.name: s for s in tool_specs(["a"])}[tool]
    schema = json.loads(json.dumps(spec.input_schema))
    schema["properties"].get("name", {}).pop("enum", None)  # names are the runtime's to judge
    fits = jsonschema.Draft202012Validator(schema).is_valid(args) and all(
        not isinstance(v, str) or v.strip() or "minLength" not in schema["properties"][k]
        for k, v in args.items()
    )
    try:
        checked = check_arguments(spec, args)
    except UsageError as exc:
        assert not fits, exc.to_dict()
        assert exc.tool == tool and (exc.argument or exc.arguments or exc.message)
        return
    assert fits
    assert set(checked) >= set(args)


def test_route_summary_carries_pointers_with_the_client_s_own_load_step() -> None:
    from skillrt.mcp.service import route_summary

    data = {
        "plan": {"skills": [{"name": "a"}], "primary": "a"},
        "pointers": [{"name": "b", "why": "close runner-up to a", "load": "skillrt show b"}],
    }
    summary = route_summary(data)
    assert summary["pointers"] == [
        {
            "name": "b",
            "why": "close runner-up to a",
            "load": "call load_skill with name 'b' if it fits",
        }
    ]
    assert route_summary({"plan": {}})["pointers"] == []
    assert route_summary(data)["next"].startswith("call load_skill for each skill")
    # No skill injected, but one pointed to (a quick question of fact): the model answers
    # and loads it only if it fits; it is not told that no skill fits.
    asked = {"plan": {"skills": []}, "pointers": data["pointers"]}
    assert "only if it fits" in route_summary(asked)["next"]
    assert route_summary({"plan": {}})["next"] == "no skill fits: answer without one"
