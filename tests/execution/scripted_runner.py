"""A scripted model for runner tests: ``python scripted_runner.py RULES.json [LOG]``.

Reads the prompt on stdin, picks the first rule whose ``match`` substring occurs in it
(no ``match``: any prompt), and answers with that rule's ``stdout``/``stderr``/``exit``.
``sequence: [{stdout, stderr, exit}, ...]`` answers the n-th call with the n-th
item (the last one repeats). ``fail_times: N`` makes the rule answer with its failure
``N`` times (counted in ``RULES.json.state``) and then with ``ok_stdout`` / exit 0.
``when_file`` + ``file_has``: the rule applies only when that file contains the text
(used to see a repair land).
Every call appends ``{"rule": i, "prompt_head": ...}`` to LOG.
"""

import json
import os
import sys
import time


def main() -> int:
    rules_path = sys.argv[1]
    log_path = sys.argv[2] if len(sys.argv) > 2 else None
    prompt = sys.stdin.read()
    with open(rules_path, encoding="utf-8") as fh:
        rules = json.load(fh)
    state_path = rules_path + ".state"
    try:
        with open(state_path, encoding="utf-8") as fh:
            state = json.load(fh)
    except (OSError, ValueError):
        state = {}
    for i, rule in enumerate(rules):
        if rule.get("match") and rule["match"] not in prompt:
            continue
        if rule.get("not_match") and rule["not_match"] in prompt:
            continue
        if rule.get("when_file"):
            try:
                with open(rule["when_file"], encoding="utf-8") as fh:
                    if rule.get("file_has", "") not in fh.read():
                        continue
            except OSError:
                continue
        if log_path:
            with open(log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"rule": i, "prompt_head": prompt[:200000]}) + "\n")
        if rule.get("sleep"):
            time.sleep(float(rule["sleep"]))
        if rule.get("rendezvous"):
            # Parallelism probe: announce ourselves, then wait for the other process.
            folder, me, other = rule["rendezvous"]
            open(os.path.join(folder, me), "w").close()
            for _ in range(200):
                if os.path.exists(os.path.join(folder, other)):
                    sys.stdout.write(f"{me} met {other}")
                    return 0
                time.sleep(0.05)
            sys.stdout.write(f"{me} alone")
            return 0
        if rule.get("env"):
            sys.stdout.write(json.dumps({k: os.environ.get(k) for k in rule["env"]}))
            return 0
        key = str(i)
        if rule.get("sequence") is not None:
            used = state.get(key, 0)
            state[key] = used + 1
            with open(state_path, "w", encoding="utf-8") as fh:
                json.dump(state, fh)
            step = rule["sequence"][min(used, len(rule["sequence"]) - 1)]
            sys.stdout.write(step.get("stdout", ""))
            sys.stderr.write(step.get("stderr", ""))
            return int(step.get("exit", 0))
        if rule.get("fail_times") is not None:
            used = state.get(key, 0)
            state[key] = used + 1
            with open(state_path, "w", encoding="utf-8") as fh:
                json.dump(state, fh)
            if used >= int(rule["fail_times"]):
                sys.stdout.write(rule.get("ok_stdout", "ok"))
                return 0
        if rule.get("echo"):
            sys.stdout.write(prompt)
        sys.stdout.write(rule.get("stdout", ""))
        sys.stderr.write(rule.get("stderr", ""))
        return int(rule.get("exit", 0))
    sys.stderr.write("scripted_runner: no rule matched\n")
    return 3


if __name__ == "__main__":
    sys.exit(main())
