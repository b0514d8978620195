"""The progress bar a first command and ``install`` draw: the share done and an
estimate of the time left, at the pace so far (issue 30)."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from skillrt.cli.output import ProgressBar, estimate


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_bar_says_how_long_the_rest_takes() -> None:
    out, clock = io.StringIO(), Clock()
    bar = ProgressBar(stream=out, clock=clock)
    bar.build("embedding vectors of 3,000 texts", 0, 1_000)
    assert "0%" in out.getvalue() and "left" not in out.getvalue()
    clock.now += 10.0  # a quarter in 10 s: 30 s to go
    bar.build("embedding vectors of 3,000 texts", 250, 1_000)
    assert out.getvalue().endswith("] 25%, about 30 s left\033[K")
    clock.now += 50.0  # half in 60 s: a minute to go
    bar.build("embedding vectors of 3,000 texts", 500, 1_000)
    assert "50%, about 1 min left" in out.getvalue()
    bar.build("embedding vectors of 3,000 texts", 1_000, 1_000)
    assert out.getvalue().endswith("] 100%\033[K\n")


def test_each_phase_has_its_own_clock() -> None:
    out, clock = io.StringIO(), Clock()
    bar = ProgressBar(stream=out, clock=clock)
    bar.build("reading skills", 0, 10)
    clock.now += 100.0
    bar.build("reading skills", 10, 10)
    bar.build("embedding vectors", 0, 100)
    clock.now += 2.0
    bar.build("embedding vectors", 50, 100)
    assert out.getvalue().rstrip("\033[K").endswith("50%, about 2 s left")


def test_no_bar_off_a_terminal(capsys: object) -> None:
    bar = ProgressBar()  # stderr is captured by pytest: not a terminal
    assert not bar.enabled


@given(
    st.floats(min_value=0, max_value=1e6),
    st.integers(min_value=0, max_value=10**9),
    st.integers(min_value=1, max_value=10**9),
)
def test_estimates_are_plain_words(elapsed: float, done: int, total: int) -> None:
    text = estimate(elapsed, done, total)
    if elapsed < 1 or done == 0 or done >= total:
        assert text == ""
    else:
        number, unit = text.split()
        assert int(number) >= 0 and unit in ("s", "min")
