"""One way to build a runner (issue 20): the same options, config keys, flags and errors
for every entry point, and a saved runner rebuilt the same way on resume."""

from __future__ import annotations

import argparse
import dataclasses
import json
import typing

import pytest

from skillrt.cli.app import build_parser
from skillrt.config import ExecutionConfig
from skillrt.errors import ConfigError, UsageError
from skillrt.execution.base import Runner
from skillrt.execution.options import RUNNER_NAMES, SELECTED_BY, RunnerOptions
from skillrt.execution.runners import (
    RUNNERS,
    CommandRunner,
    DryRunRunner,
    OpenAIRunner,
    build_runner,
    rebuild_runner,
    spec_options,
)

URL = "http://127.0.0.1:9/v1"


def test_every_option_is_an_execution_key_of_the_same_type() -> None:
    keys = {f.name: f for f in dataclasses.fields(ExecutionConfig)}
    hints = typing.get_type_hints(ExecutionConfig)
    option_hints = typing.get_type_hints(RunnerOptions)
    for f in dataclasses.fields(RunnerOptions):
        assert f.name in keys, f.name
        # The option is the key's type, or None for "not given".
        assert option_hints[f.name] in (hints[f.name] | None, hints[f.name]), f.name
        assert str(f.metadata["flag"]).startswith("--")


def test_runner_names_and_settings_agree() -> None:
    assert tuple(RUNNERS) == RUNNER_NAMES
    fields = {f.name for f in dataclasses.fields(RunnerOptions)}
    for cls in RUNNERS.values():
        assert set(cls.settings) <= fields, cls
    assert set(SELECTED_BY.values()) <= set(RUNNERS)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _runner_commands() -> dict[str, argparse.ArgumentParser]:
    top = _subparsers(build_parser())
    workflow = _subparsers(top["workflow"])
    return {
        "run": top["run"],
        "dispatch": top["dispatch"],
        "run-skill": top["run-skill"],
        "orchestrate": top["orchestrate"],
        "mcp": top["mcp"],
        "workflow start": workflow["start"],
        "workflow resume": workflow["resume"],
    }


def test_every_command_that_runs_a_model_has_the_same_runner_flags() -> None:
    flags = {str(f.metadata["flag"]) for f in dataclasses.fields(RunnerOptions)} | {"--dry-run"}
    for name, parser in _runner_commands().items():
        options = {o for a in parser._actions for o in a.option_strings}
        assert flags <= options, (name, flags - options)


@pytest.mark.parametrize("command", sorted(_runner_commands()))
def test_runner_openai_is_not_an_abbreviation(command: str) -> None:
    words = command.split() + (["--prompt", "x"] if command == "dispatch" else [])
    words += {"run": ["t"], "orchestrate": ["t"], "run-skill": ["s", "t"]}.get(command, [])
    words += {"workflow start": ["s", "q"], "workflow resume": ["r"]}.get(command, [])
    args = build_parser().parse_args([*words, "--runner", "openai", "--model", "m"])
    assert (args.runner, args.runner_cmd, args.model) == ("openai", None, "m")


def test_an_option_that_belongs_to_one_kind_chooses_it() -> None:
    cfg = ExecutionConfig(runner="openai", base_url=URL, model="m")
    assert RunnerOptions(runner_cmd="cat").apply(cfg).runner == "command"
    assert RunnerOptions(base_url=URL).apply(ExecutionConfig()).runner == "openai"
    assert RunnerOptions(model="x").apply(cfg).runner == "openai"  # keeps the config's
    assert RunnerOptions(runner="dry-run", runner_cmd="cat").apply(cfg).runner == "dry-run"
    assert RunnerOptions().apply(cfg) is cfg


def test_options_of_two_kinds_without_runner_are_a_usage_error() -> None:
    """--runner-cmd and --base-url without --runner: which runner was meant is not known
    (it used to be the config's, silently); --runner says."""
    both = RunnerOptions(runner_cmd="cat", base_url=URL)
    with pytest.raises(UsageError) as exc:
        both.apply(ExecutionConfig(runner="openai", base_url=URL, model="m"))
    assert exc.value.code == "E_USAGE"
    assert "--runner-cmd and --base-url" in exc.value.message and "--runner" in exc.value.message
    chosen = dataclasses.replace(both, runner="command").apply(ExecutionConfig())
    assert chosen.runner == "command" and chosen.runner_cmd == "cat"


def test_options_over_a_saved_runner() -> None:
    saved = RunnerOptions(runner="openai", base_url=URL, model="m1")
    assert RunnerOptions(model="m2").over(saved) == dataclasses.replace(saved, model="m2")
    assert RunnerOptions(timeout_s=5.0).over(saved).base_url == URL
    other = RunnerOptions(runner_cmd="cat")
    assert other.over(saved) == other  # another kind replaces it altogether


@pytest.mark.parametrize(
    "options",
    [
        RunnerOptions(runner_cmd="llm -m x", writes_files=True),
        RunnerOptions(runner="openai", base_url=URL, model="m"),
        RunnerOptions(runner="dry-run"),
    ],
    ids=["command", "openai", "dry-run"],
)
def test_a_saved_runner_is_rebuilt_by_the_same_builder(options: RunnerOptions) -> None:
    env = {"PATH": "/bin", "OPENAI_API_KEY": "sk-never-saved"}
    runner = build_runner(ExecutionConfig(), options, environ=env)
    spec = runner.spec()
    assert spec is not None and "sk-never-saved" not in json.dumps(spec)
    again = rebuild_runner(ExecutionConfig(), spec, environ=env)
    assert again is not None and type(again) is type(runner) and again.spec() == spec
    assert again.writes_files == runner.writes_files
    if isinstance(again, OpenAIRunner):
        assert again.api_key == "sk-never-saved"  # read again from the environment


def test_a_missing_key_is_a_clear_error_on_rebuild() -> None:
    runner = build_runner(
        ExecutionConfig(runner="openai", base_url=URL, model="m", api_key_env="MY_KEY"),
        environ={"MY_KEY": "k-1"},
    )
    spec = runner.spec()
    with pytest.raises(ConfigError) as exc:
        rebuild_runner(ExecutionConfig(), spec, environ={"PATH": "/bin"})
    assert exc.value.context["reason"] == "api_key_missing"
    assert exc.value.context["key"] == "MY_KEY" and "MY_KEY" in exc.value.message
    # Options that choose another kind need no key.
    other = rebuild_runner(
        ExecutionConfig(), spec, environ={}, options=RunnerOptions(runner_cmd="cat")
    )
    assert isinstance(other, CommandRunner)


def test_a_resume_may_read_the_key_from_another_variable() -> None:
    """--api-key-env NEW on resume: the saved variable need not be set any more, NEW
    must be (and is read)."""
    saved = build_runner(
        ExecutionConfig(runner="openai", base_url=URL, model="m", api_key_env="OLD_KEY"),
        environ={"OLD_KEY": "k-old"},
    ).spec()
    assert saved is not None
    renamed = RunnerOptions(api_key_env="NEW_KEY")
    again = rebuild_runner(ExecutionConfig(), saved, environ={"NEW_KEY": "k-new"}, options=renamed)
    assert isinstance(again, OpenAIRunner)
    assert again.api_key == "k-new" and again.api_key_env == "NEW_KEY"
    with pytest.raises(ConfigError) as exc:
        rebuild_runner(ExecutionConfig(), saved, environ={"OLD_KEY": "k-old"}, options=renamed)
    assert exc.value.context["key"] == "NEW_KEY"


def test_specs_saved_before_the_options_still_rebuild() -> None:
    again = rebuild_runner(ExecutionConfig(), {"kind": "command", "cmd": "cat"}, environ={})
    assert isinstance(again, CommandRunner) and again.command == "cat"


def test_a_python_runner_cannot_be_rebuilt_by_name() -> None:
    class Mine(Runner):
        name = "mine"

        def run(self, prompt: str, *, timeout_s: float | None = None) -> typing.Any:
            raise NotImplementedError

    assert Mine().describe() == {"kind": "python", "name": "mine"}
    assert spec_options(Mine().describe()) is None
    assert rebuild_runner(ExecutionConfig(), Mine().describe()) is None


def test_capabilities() -> None:
    assert DryRunRunner.dry_run and not DryRunRunner().writes_files
    assert not OpenAIRunner(URL, "m").writes_files  # it returns text
    assert OpenAIRunner(URL, "m").describe()["model"] == "m"
    assert CommandRunner("cat").writes_files is False
    assert CommandRunner("cat", writes_files=True).writes_files is True


def test_a_runner_setting_is_declared_once() -> None:
    """Each runner setting is one field of RunnerSettings (issue 28): the ``execution``
    key, the option, the flag and the runner kinds that save it all come from it."""
    from skillrt.cli.runner_flags import add_runner_flags
    from skillrt.execution.options import runner_settings
    from skillrt.runner_settings import RunnerSettings

    names = [f.name for f in dataclasses.fields(RunnerSettings)]
    assert issubclass(ExecutionConfig, RunnerSettings)
    assert [f.name for f in dataclasses.fields(RunnerOptions)] == names
    parser = argparse.ArgumentParser()
    add_runner_flags(parser)
    assert {a.dest for a in parser._actions if a.option_strings} - {"help"} == {
        *names,
        "dry_run",
    }
    for kind, cls in RUNNERS.items():
        assert cls.settings == runner_settings(kind)
    assert SELECTED_BY == {"runner_cmd": "command", "base_url": "openai"}


def test_a_new_setting_is_an_option_and_a_flag_by_its_field_alone() -> None:
    from skillrt.execution.options import _optional_fields_of, runner_settings
    from skillrt.runner_settings import RunnerSettings, _runner_setting

    @dataclasses.dataclass(frozen=True)
    class WithTemperature(RunnerSettings):
        temperature: float = _runner_setting(
            0.0, "--temperature", "sampling temperature", kinds=("openai",), type=float
        )

    @_optional_fields_of(WithTemperature)
    class Options:
        pass

    chosen = Options(temperature=0.5)
    assert chosen.temperature == 0.5 and Options().temperature is None
    assert typing.get_type_hints(Options)["temperature"] == float | None
    field = next(f for f in dataclasses.fields(Options) if f.name == "temperature")
    assert field.metadata["flag"] == "--temperature"
    assert "temperature" not in runner_settings("openai")  # only the declared class has it
