"""The request's form: a quick question weighs against loading a skill."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillrt.config import RoutingConfig
from skillrt.routing.calibration import MODELS, TOKEN_MODELS, ScoreModel
from skillrt.routing.request_form import (
    LONG_REQUEST_WORDS,
    is_question,
    quick_question,
    request_words,
)
from skillrt.routing.router import Router

from .conftest import catalogue


@pytest.mark.parametrize(
    "text",
    [
        "which nmap flag is the UDP scan again, -sU or -sV?",
        "is django 5.2 an LTS release",
        "how do i list all the git worktrees I already have",
        "quick one: was d3.event removed in d3 v6 or v7?",
        "Hey, does `gh pr list` include drafts",
        "kubectl flag for the previous container's logs?  ",
        'what does "HEAD~1" mean?")',
        "这个错误是什么意思？",
        "can you tell me what port vercel dev uses",
    ],
)
def test_questions(text: str) -> None:
    assert is_question(text)
    assert 0.0 < quick_question(text) < 1.0


@pytest.mark.parametrize(
    "text",
    [
        "fix the failing login test",
        "reply to Priya: thursday 3pm works",
        "Howdy team, deploy the api",  # an opener inside a longer word is not one
        "can you fix the failing login test?",  # a polite request is a task
        "Could you please bump the node version in the Dockerfile",
        "what's left: please finish the migration?",
        "",
        "   ",
    ],
)
def test_tasks_and_messages_are_not_questions(text: str) -> None:
    assert not is_question(text)
    assert quick_question(text) == 0.0


def test_a_question_with_the_details_of_a_task_weighs_as_a_task() -> None:
    detailed = (
        "why does my vite build fail with 'Cannot find module @/components/Button' after I "
        "moved the alias config from vite.config.ts into tsconfig paths last week?"
    )
    assert is_question(detailed)
    assert request_words(detailed) >= LONG_REQUEST_WORDS
    assert quick_question(detailed) == 0.0


def test_words_count_identifiers_numbers_and_cjk() -> None:
    assert request_words("is d3.event gone in v7?") == 5
    assert request_words("port 5173 or 3000") == 4
    assert request_words("报错了") == 2  # a CJK run: one word per two characters


@given(st.text(max_size=200), st.text(alphabet="abcdefgh ", min_size=1, max_size=200))
def test_more_words_never_make_a_question_quicker(question: str, more: str) -> None:
    text = question + "?"
    longer = more + " " + text
    assert 0.0 <= quick_question(text) <= 1.0
    if is_question(longer):
        assert quick_question(longer) <= quick_question(text) + 1e-12


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))
def test_a_quick_question_never_raises_p_scope(
    best: float, lex: float, unknown: float, q: float
) -> None:
    plain = {"fused": best, "lexical": lex, "unknown": unknown}
    for model in (*MODELS.values(), *TOKEN_MODELS.values()):
        for form in ("question", "brevity"):
            assert model.coefficient(form) <= 0.0
            assert model.scope({**plain, form: q}) <= model.scope(plain) + 1e-12


def test_the_fitted_minilm_models_read_the_form() -> None:
    for model in (MODELS["onnx-minilm"], TOKEN_MODELS["onnx-minilm"]):
        assert model.coefficient("question") < 0 and model.coefficient("brevity") < 0
    assert ScoreModel().coefficient("question") == 0.0  # a hand-made model leaves it out


def test_router_answers_a_quick_question_with_no_skill_and_explains_why() -> None:
    # The hashing model leaves the form out; a project can weigh it in by config.
    config = RoutingConfig(use_stats=False, options={"score_model": {"question": -8.0}})
    plain = Router.from_skills(catalogue(), RoutingConfig(use_stats=False), backend="hashing")
    weighed = Router.from_skills(catalogue(), config, backend="hashing")
    question = "which severity do diff bugs and security problems get?"
    task = "review a pull request diff for bugs and security problems"
    assert plain.route(question).plan.names == ("code-review",)
    result = weighed.route(question, explain=True)
    assert result.plan.no_skill
    top = result.candidates[0]
    assert top.score.signals["scope_question"] > 0.0
    assert (
        top.score.signals["p_scope"]
        < plain.route(question, explain=True).candidates[0].score.signals["p_scope"]
    )
    assert weighed.route(task).plan.names == ("code-review",)


def test_brevity_falls_with_words_and_asks_reads_a_clause() -> None:
    from skillrt.routing.request_form import BRIEF_REQUEST_WORDS, asks, brevity

    assert brevity("") == 1.0 and brevity("thanks, merged") > 0.9
    assert brevity(" ".join(["word"] * BRIEF_REQUEST_WORDS)) == 0.0
    for clause in (
        "then patch the handler so it can't be abused",
        "once it works locally, deploy it as a preview",
        "I need a preview deployment of this branch",
        "can you write the release notes",
        "do a code review of this PR",
        "how do I stop the cron job?",
    ):
        assert asks(clause), clause
    for clause in ("It runs from Jenkins on Ubuntu", "Sentry shows no errors", "thanks, merged"):
        assert not asks(clause), clause
    assert not is_question("do a code review of this PR")
    assert is_question("do you know the default port?")


@given(st.text(max_size=120), st.text(alphabet="abcdef ", min_size=1, max_size=120))
def test_more_words_never_make_a_message_briefer(text: str, more: str) -> None:
    from skillrt.routing.request_form import brevity

    assert 0.0 <= brevity(text) <= 1.0
    assert brevity(text + " " + more) <= brevity(text) + 1e-12


def test_the_form_is_read_on_the_person_s_own_words_not_the_paste() -> None:
    from skillrt.routing.request_form import own_words

    pasted = (
        "    Last State:   Terminated\n      Reason:     OOMKilled\n      Exit Code:  137\n\n"
        "is exit code 137 always an OOM kill?"
    )
    assert own_words(pasted) == "is exit code 137 always an OOM kill?"
    assert quick_question(pasted) > 0.5
    fenced = '```\nTraceback (most recent call last):\n  File "a.py", line 1\n```\nwhy?'
    assert own_words(fenced) == "why?"
    # Prose around a paste: the words after it; before it when nothing follows.
    log = "getting this on staging:\n\n$ gh pr checks 482\nX  unit (3.12)   1m58s\n"
    assert own_words(log) == "getting this on staging:"
    # A message without a paste is read whole; the situation around a paste is a task.
    plain = "the login test fails since my refactor.\nplease find out why"
    assert own_words(plain) == plain
    task = "$ npm test\nFAIL src/date.test.ts (3 failed)\n\nthis started after my refactor"
    assert quick_question(task) == 0.0


def test_a_lead_in_before_a_colon_does_not_hide_a_question() -> None:
    assert is_question("before I merge: does git merge --squash keep the authors")
    assert not is_question("reply to Priya: thursday 3pm works")


@given(st.text(max_size=400))
def test_own_words_is_a_part_of_the_text(text: str) -> None:
    from skillrt.routing.request_form import own_words

    own = own_words(text)
    assert all(line in text for line in own.splitlines())


def test_a_brief_ask_is_a_short_task_not_a_question() -> None:
    from skillrt.routing.decide import brief_ask

    assert brief_ask("write a failing test first for the new date parser before implementing it")
    assert not brief_ask("which nmap flag is the UDP scan again?")
    assert not brief_ask("thanks, merged")  # asks for nothing
    assert not brief_ask("fix the parser " + "and its many callers " * 10)  # not brief


#: Quick questions of fact about what the message shows (written for this test).
FACTS_ABOUT_MATERIAL = [
    "$ kubectl get pods\nweb-7f9  0/1  CrashLoopBackOff  12\n\n"
    "is that restart count per container or per pod?",
    "```\nWARN deprecated: punycode\n```\nwhich node version removed punycode from core?",
    "error TS2304: Cannot find name 'structuredClone'.\n\ndoes that need lib es2022 or dom?",
    "cargo build\n   Compiling serde v1.0.197\n\n"
    "quick q: what's the default opt-level with --release?",
    "$ git push\n ! [rejected]  main -> main (non-fast-forward)\n\n"
    "what does non-fast-forward mean?",
    "```\nDeprecationWarning: datetime.utcnow() is deprecated\n```\n"
    "in which python version is it removed?",
    "our nginx has `client_max_body_size 1m;`. what's the unit when there is no suffix?",
    "pip says:\n\nERROR: No matching distribution found for torch==2.1.0\n\n"
    'what does "no matching distribution" mean here?',
]
#: The same kind of message asking for work, advice, a judgement or a diagnosis.
NOT_FACTS = [
    "$ npm test\nFAIL src/date.test.ts (3 failed)\n\nwhy does this fail?",
    "$ npm test\nFAIL src/date.test.ts (3 failed)\n\nwhat is causing these failures?",
    "$ npm test\nFAIL src/date.test.ts (3 failed)\n\nwhich of the date tests is broken?",
    "$ npm test\nFAIL src/date.test.ts (3 failed)\n\nwhat does this error mean?",
    "```go\nfor v := range ch {\n    go process(v)\n}\n```\ndoes this leak goroutines?",
    "```sql\nSELECT * FROM users WHERE name = '$name'\n```\n"
    "is this vulnerable to injection or not?",
    "```python\ndef load(p):\n    return json.load(open(p))\n```\n"
    "how do I write a unit test for this?",
    "```python\ndef load(p):\n    return json.load(open(p))\n```\n"
    "what are the problems with this code?",
    "Please review this PR before I merge it:\n```diff\n+timeout=5\n```\n"
    "is the timeout in seconds or milliseconds?",  # the ask before the question stands
    "```\nversion: 2.4.1\n```\nwhich version should we pin, 2.4.1 or 2.5?",
    "$ npm test\nFAIL src/date.test.ts (3 failed)\n\nhow do I fix the date parser tests?",
    "diff --git a/api.py b/api.py\n+    os.system(cmd)\n\nis this safe to merge?",
    "plan.md has 7 tasks, all written out.\n\nwhere do I even start?",
    "Package   Current  Latest\nnext      12.3.4   14.2.3\n\nhow should we upgrade these?",
    "```\nselect * from orders\n```\nanything off with this?",
    "here is the spec:\n\n- invites by email\n- audit log\n\nwhat's the best way to split it up?",
    "is CrashLoopBackOff the same as OOMKilled?",  # nothing shown: the form alone decides
    "$ kubectl get pods\nweb-7f9  0/1  CrashLoopBackOff  12\n\nplease find out why it restarts",
    "error TS2304: Cannot find name 'structuredClone'.\n\nis there a tool that fixes these?",
    "",
    "?",
]


@pytest.mark.parametrize("text", FACTS_ABOUT_MATERIAL)
def test_a_quick_question_of_fact_about_what_is_shown(text: str) -> None:
    from skillrt.routing.request_form import fact_about_material

    assert fact_about_material(text)


@pytest.mark.parametrize("text", NOT_FACTS)
def test_work_advice_judgement_and_diagnosis_are_not_quick_facts(text: str) -> None:
    from skillrt.routing.request_form import fact_about_material

    assert not fact_about_material(text)


def test_a_question_with_a_task_s_particulars_is_not_a_quick_fact() -> None:
    from skillrt.routing.request_form import FACT_QUESTION_WORDS, fact_about_material

    paste = "$ kubectl get pods\nweb-7f9  0/1  CrashLoopBackOff  12\n\n"
    long = "is that restart count per container " + "of the web pod " * FACT_QUESTION_WORDS
    assert fact_about_material(paste + "is that restart count per container or per pod?")
    assert not fact_about_material(paste + long + "or per pod?")
    # A question in several sentences is read from its first ("which flag? just -g?").
    assert fact_about_material(paste + "which flag shows the previous logs? just -p?")


@given(st.text(max_size=300), st.text(max_size=80))
def test_the_quick_fact_reading_never_raises_and_needs_a_final_question(
    text: str, question: str
) -> None:
    from skillrt.routing.request_form import fact_about_material

    result = fact_about_material(text + "\n\n" + question)
    assert isinstance(result, bool)
    if result:
        assert (text + "\n\n" + question).rstrip().rstrip("\"')”’ ").endswith(("?", "？"))


def test_router_points_to_the_skill_of_a_quick_fact_and_injects_it_for_work() -> None:
    on = RoutingConfig(use_stats=False, point_quick_facts=True)
    router = Router.from_skills(catalogue(), on, backend="hashing")
    paste = "$ git rebase main\nCONFLICT (content): Merge conflict in api.py\n\n"
    task = router.route(paste + "resolve the merge conflicts with git and finish the rebase")
    assert task.plan.names == ("git-helper",)
    asked = "does git rebase keep the author date or the committer date?"
    fact = router.route(paste + asked, explain=True)
    assert fact.plan.no_skill
    assert [p.name for p in fact.pointers] == ["git-helper"]
    top = next(c for c in fact.candidates if c.name == "git-helper")
    assert top.status == "below_threshold" and top.reason.startswith("a quick question of fact")
    from skillrt.routing.why_not import why_not

    said = why_not(router, paste + asked, "git-helper")
    assert "quick_fact" in [r.code for r in said.reasons]
    # Off by default: the skill is injected as for any request.
    plain = Router.from_skills(catalogue(), RoutingConfig(use_stats=False), backend="hashing")
    assert plain.route(paste + asked).plan.names == ("git-helper",)
