"""Conformance: skills-ref 0.1.1's own test suite (40 tests) passes against skillrt.

The suite ships only in the sdist, which is fetched at install time, never here: ``.ci/run``
downloads it (hash-pinned by ``.ci/skills-ref.txt``) into ``.ci/cache/``, where this test
reads it offline. Its ``tests/`` folder runs in a subprocess with ``adapter/`` first on
``PYTHONPATH``: the ``skills_ref`` package there maps each function onto skillrt.

Without the sdist the test is skipped with the command that fetches it; set
``SKILLRT_SKILLS_REF_SDIST=/path/to/skills_ref-0.1.1.tar.gz`` to use a copy kept elsewhere,
and ``SKILLRT_CONFORMANCE_REQUIRED=1`` (CI does) to fail rather than skip.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

VERSION = "0.1.1"
SDIST_NAME = f"skills_ref-{VERSION}.tar.gz"
#: sha256 of the sdist on PyPI; a release file never changes, so a mismatch is an error.
SDIST_SHA256 = "6b400ca6e0049be62dca0167ff943ba2745fd67efb37fbba4d0ee341fccd2695"
EXPECTED_TESTS = 40
ADAPTER = Path(__file__).resolve().parent / "adapter"
REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.conformance


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _unavailable(reason: str) -> None:
    if os.environ.get("SKILLRT_CONFORMANCE_REQUIRED") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def _sdist(request: pytest.FixtureRequest) -> Path:
    given = os.environ.get("SKILLRT_SKILLS_REF_SDIST")
    if given:
        path = Path(given)
        if not path.is_file():
            pytest.fail(f"SKILLRT_SKILLS_REF_SDIST={given} is not a file")
    else:
        places = [REPO / ".ci" / "cache" / SDIST_NAME]
        cache = getattr(request.config, "cache", None)
        if cache is not None:  # where an older checkout downloaded it
            places.append(Path(cache.mkdir(f"skills-ref-{VERSION}")) / SDIST_NAME)
        found = next((p for p in places if p.is_file()), None)
        if found is None:
            _unavailable(
                f"the skills-ref {VERSION} sdist is not here (looked in {places[0]}); fetch it "
                "with `python -m pip download --no-deps --no-binary :all: --require-hashes "
                "-r .ci/skills-ref.txt -d .ci/cache` (.ci/run does) or set "
                "SKILLRT_SKILLS_REF_SDIST"
            )
        assert found is not None
        path = found
    digest = _sha256(path)
    assert digest == SDIST_SHA256, f"{path} is not the published skills-ref {VERSION} sdist"
    return path


def _extract_tests(sdist: Path, dest: Path) -> Path:
    """Extract only ``skills_ref-<v>/tests/*`` (regular files, no links, no escapes)."""
    prefix = f"skills_ref-{VERSION}/tests/"
    with tarfile.open(sdist, "r:gz") as tar:
        members = [
            m
            for m in tar.getmembers()
            if m.name.startswith(prefix) and m.isfile() and ".." not in Path(m.name).parts
        ]
        tar.extractall(dest, members=members, filter="data")
    tests = dest / prefix
    assert (tests / "test_validator.py").is_file()
    return tests


def test_skills_ref_suite_passes_against_skillrt(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    tests = _extract_tests(_sdist(request), tmp_path / "sdist")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ADAPTER), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTEST_ADDOPTS", None)
    # The shim, not a real skills-ref, must be what the suite imports.
    probe = subprocess.run(
        [sys.executable, "-c", "import skills_ref; print(skills_ref.SKILLRT_ADAPTER)"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert probe.stdout.strip() == "True", probe.stderr
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")  # keep skillrt's own pytest options out of the run
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(ini), "-rfE"]
        + [str(tests)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert summary.startswith(f"{EXPECTED_TESTS} passed"), proc.stdout[-4000:]
