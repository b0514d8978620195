"""The prompt hook finds the state folder the way every command does, without validating
(and paying for) the whole config file."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.errors import ConfigError
from skillrt.settings import load_config, locate_state


@pytest.mark.parametrize(
    ("text", "explicit", "state"),
    [
        (None, None, None),
        (None, None, "elsewhere"),
        ("routing:\n  semantic_top_k: 2\n", None, None),
        ("state_dir: var/state\n", None, None),
        ("state_dir: /abs/state\n", None, None),
        ("state_dir: ~/state\n", None, None),
        ("state_dir: var/state\n", None, "flagged"),
        ("state_dir: var/state\n", None, "postgresql://u@h/db"),
        ("state_dir: var/state\n", "conf/other.yaml", None),
    ],
)
def test_locate_state_agrees_with_load_config(
    tmp_path: Path, text: str | None, explicit: str | None, state: str | None
) -> None:
    if text is not None:
        path = tmp_path / (explicit or "skillrt.yaml")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    config = load_config(explicit, state, cwd=tmp_path, home=None)
    assert locate_state(explicit, state, cwd=tmp_path) == (config.state_dir, config.project_dir)


def test_a_missing_explicit_config_or_a_bad_state_dir_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        locate_state("absent.yaml", None, cwd=tmp_path)
    (tmp_path / "skillrt.yaml").write_text("state_dir: [a]\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        locate_state(None, None, cwd=tmp_path)
