"""The backend is chosen in one place: the scheme map of ``skillrt.store.backends``.

A third backend (``tests/store/dummy_backend.py``) registered through that map alone is
taken by every way in: ``Store(url)``, ``open_location``, ``state.url`` in skillrt.yaml,
``--state URL`` on the command line, and ``state migrate``; unregistered, the same URL
is refused as a scheme skillrt does not have.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.store import dummy_backend
from tests.store.dummy_backend import DummyStore

from skillrt.cli import main
from skillrt.config import RuntimeConfig
from skillrt.errors import ConfigError, StoreMisconfigured
from skillrt.store import Store, open_location, open_store
from skillrt.store.backends import BACKENDS, is_store_url, unknown_scheme, url_examples

Make = Callable[..., Path]


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(BACKENDS, dummy_backend.SCHEME, lambda: DummyStore)
    yield
    dummy_backend.ENABLED.clear()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(["--json", *args])
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def test_an_unregistered_scheme_is_refused_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"dummy://{tmp_path}/state.db"
    assert unknown_scheme(url) == "dummy" and not is_store_url(url)
    with pytest.raises(StoreMisconfigured):
        Store(url)
    (tmp_path / "skillrt.yaml").write_text(f"state:\n  url: '{url}'\n", encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        RuntimeConfig.from_file(tmp_path / "skillrt.yaml")
    assert exc.value.context["field"] == "state.url"
    code, out = run(capsys, "--state", url, "list")
    assert code == 2 and out["error"]["code"] == "E_USAGE"
    assert "'dummy'" in out["error"]["message"]
    assert not (tmp_path / "state.db").exists()


@pytest.mark.usefixtures("registered")
def test_one_map_entry_opens_the_backend_every_way(tmp_path: Path) -> None:
    url = f"dummy://{tmp_path}/state.db"
    assert is_store_url(url) and unknown_scheme(url) is None
    assert "dummy://..." in url_examples()
    for store in (Store(url), open_location(url)):
        assert type(store) is DummyStore and store.location == url
        store.close()
    (tmp_path / "skillrt.yaml").write_text(f"state:\n  url: '{url}'\n", encoding="utf-8")
    config = RuntimeConfig.from_file(tmp_path / "skillrt.yaml")
    store = open_store(config)
    assert type(store) is DummyStore
    store.close()


@pytest.mark.usefixtures("registered")
def test_the_cli_runs_on_a_registered_backend_through_its_interfaces(
    tmp_path: Path,
    make_skill: Make,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "skills"
    make_skill("alpha", description="Write release notes from a changelog.", root=root)
    make_skill("beta", description="Review a pull request for bugs.", root=root)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "skillrt.yaml").write_text(
        "discovery:\n  conventional_roots: false\nrouting:\n  embedding_backend: hashing\n",
        encoding="utf-8",
    )
    url = f"dummy://{tmp_path}/state/state.db"
    flags = ("--state", url, "--root", str(root))
    assert run(capsys, *flags, "disable", "alpha")[0] == 0
    # The enable state went through the backend's own interface, not a table.
    assert dummy_backend.ENABLED[url] == {"alpha": False}
    code, listed = run(capsys, *flags, "list")
    assert code == 0
    state = {s["name"]: s["enabled"] for s in listed["skills"]}
    assert state == {"alpha": False, "beta": True}
    code, routed = run(capsys, *flags, "route", "review this pull request for bugs")
    assert code == 0
    code, info = run(capsys, *flags, "state", "info")
    assert code == 0
    assert info["backend"] == "dummy" and info["location"] == url
    assert info["tables"]["route_events"] == 1 and info["tables"]["skill_state"] == 0
    store = Store(url)
    assert [e.route_id for e in store.routes.latest(10)] == [routed["route_id"]]
    store.close()


@pytest.mark.usefixtures("registered")
def test_state_migrate_copies_into_a_registered_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    source = Store(tmp_path / "old" / "state.db")
    from skillrt.store import skill_state

    skill_state.set_enabled(source, "alpha", False)
    source.close()
    target = f"dummy://{tmp_path}/new/state.db"
    code, report = run(capsys, "state", "migrate", "--from", str(tmp_path / "old"), "--to", target)
    assert code == 0, report
    assert report["target"] == target and report["ok"] is True
    assert {t["table"]: t["target_rows"] for t in report["tables"]}["skill_state"] == 1
