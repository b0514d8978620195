"""The state store's schema, as ordered migrations: one list, two dialects.

Each area of skillrt owns one migration slot; a fresh database applies them all in
order, an old one applies only those above its version (SQLite's ``user_version``, the
``skillrt_schema`` table in PostgreSQL). A released migration is never edited: add a
new version instead.

Statements are written in SQLite's words; :func:`statements` gives PostgreSQL's by
widening the types (``REAL`` is 4 bytes there, ``INTEGER`` 4 bytes, ``BLOB`` is
``BYTEA``, and an autoincrement key is an identity column).
"""

from __future__ import annotations

import re

#: version -> (summary, SQL statements). Kept in ascending order.
MIGRATIONS: dict[int, tuple[str, tuple[str, ...]]] = {
    1: (
        "foundation: enable state and the parsed-skill index cache",
        (
            """CREATE TABLE skill_state (
                name TEXT PRIMARY KEY,
                enabled INTEGER NOT NULL,
                updated_at REAL NOT NULL
            )""",
            """CREATE TABLE index_cache (
                path TEXT PRIMARY KEY,
                mtime_ns INTEGER NOT NULL,
                size INTEGER NOT NULL,
                content_hash TEXT NOT NULL,
                parser_version INTEGER NOT NULL,
                record TEXT NOT NULL
            )""",
        ),
    ),
    2: (
        "routing: embedding vector cache",
        (
            """CREATE TABLE embedding_cache (
                model_id TEXT NOT NULL,
                text_hash TEXT NOT NULL,
                dim INTEGER NOT NULL,
                vector BLOB NOT NULL,
                created_at REAL NOT NULL,
                PRIMARY KEY (model_id, text_hash)
            )""",
        ),
    ),
    3: (
        "routing telemetry: route events (T1) and per-skill stats (T2)",
        (
            # One row per route (seed 001 §14). The raw query is kept only when
            # routing.record_query_text is on; query_hash always identifies it.
            """CREATE TABLE route_events (
                route_id TEXT PRIMARY KEY,
                ts REAL NOT NULL,
                surface TEXT NOT NULL,
                config_id TEXT NOT NULL,
                query_hash TEXT NOT NULL,
                query_chars INTEGER NOT NULL,
                query_text TEXT,
                query_type TEXT NOT NULL,
                candidate_count INTEGER NOT NULL,
                selected_skills TEXT NOT NULL,
                score_breakdown TEXT NOT NULL,
                routing_reason TEXT NOT NULL,
                latency_ms REAL NOT NULL,
                tokens_in INTEGER,
                tokens_out INTEGER,
                execution_result TEXT NOT NULL DEFAULT 'pending',
                fallback_used INTEGER NOT NULL DEFAULT 0,
                model_id TEXT
            )""",
            "CREATE INDEX route_events_ts ON route_events(ts)",
            # Counters per qualified skill name; routes = times scored as a candidate.
            """CREATE TABLE skill_stats (
                name TEXT PRIMARY KEY,
                routes INTEGER NOT NULL DEFAULT 0,
                selections INTEGER NOT NULL DEFAULT 0,
                executions INTEGER NOT NULL DEFAULT 0,
                successes INTEGER NOT NULL DEFAULT 0,
                failures INTEGER NOT NULL DEFAULT 0,
                fallbacks INTEGER NOT NULL DEFAULT 0,
                latency_ms_total REAL NOT NULL DEFAULT 0,
                tokens_in INTEGER NOT NULL DEFAULT 0,
                tokens_out INTEGER NOT NULL DEFAULT 0,
                last_routed_at REAL,
                last_executed_at REAL
            )""",
        ),
    ),
    4: (
        "execution: dispatches and runner calls, fallback transitions, repair attempts, patches",
        (
            # One row per runner call (or blocked / skipped dispatch) of a run.
            """CREATE TABLE executions (
                execution_id TEXT PRIMARY KEY,
                run_id TEXT,
                request_id TEXT NOT NULL,
                parent_id TEXT,
                skill TEXT,
                role TEXT,
                execution_mode TEXT NOT NULL,
                depth INTEGER NOT NULL,
                edge_type TEXT,
                path TEXT NOT NULL,
                runner TEXT NOT NULL,
                status TEXT NOT NULL,
                exit_code INTEGER,
                latency_ms REAL NOT NULL,
                tokens_in INTEGER,
                tokens_out INTEGER,
                truncated INTEGER NOT NULL DEFAULT 0,
                fallback_used INTEGER NOT NULL DEFAULT 0,
                error_code TEXT,
                error_message TEXT,
                created_at REAL NOT NULL
            )""",
            "CREATE INDEX executions_run ON executions(run_id, created_at)",
            "CREATE INDEX executions_skill ON executions(skill, created_at)",
            # Every transition of the fallback (001 §10) and repair (§12) state machines.
            """CREATE TABLE fsm_transitions (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                run_id TEXT,
                machine TEXT NOT NULL,
                path TEXT NOT NULL,
                from_state TEXT NOT NULL,
                to_state TEXT NOT NULL,
                attempt INTEGER NOT NULL,
                reason TEXT NOT NULL,
                error_code TEXT,
                created_at REAL NOT NULL
            )""",
            "CREATE INDEX fsm_transitions_run ON fsm_transitions(run_id, id)",
            # One structured record per repair attempt (001 §12).
            """CREATE TABLE repair_attempts (
                attempt_id TEXT PRIMARY KEY,
                run_id TEXT,
                skill TEXT NOT NULL,
                attempt INTEGER NOT NULL,
                outcome TEXT NOT NULL,
                error_signature TEXT NOT NULL,
                root_cause TEXT NOT NULL,
                expected_effect TEXT NOT NULL,
                patched_files TEXT NOT NULL,
                eligibility TEXT NOT NULL,
                stop_reason TEXT,
                patch_id TEXT,
                created_at REAL NOT NULL
            )""",
            # Applied patches: backups live under <state>/repairs/<patch_id>/.
            """CREATE TABLE patches (
                patch_id TEXT PRIMARY KEY,
                attempt_id TEXT,
                skill TEXT NOT NULL,
                skill_dir TEXT NOT NULL,
                backup_dir TEXT NOT NULL,
                files TEXT NOT NULL,
                status TEXT NOT NULL,
                created_at REAL NOT NULL,
                reverted_at REAL
            )""",
        ),
    ),
    5: (
        "orchestration: composite-skill runs, step outputs, phases, FSM transitions",
        (
            # One row per workflow run; ``state`` is the run FSM state (orchestration/fsm.py).
            """CREATE TABLE workflow_runs (
                run_id TEXT PRIMARY KEY,
                skill TEXT NOT NULL,
                skill_dir TEXT NOT NULL,
                query TEXT NOT NULL,
                state TEXT NOT NULL,
                blocked_from TEXT,
                task_id TEXT UNIQUE,
                domain TEXT,
                mode TEXT NOT NULL,
                runner TEXT,
                memory_dir TEXT NOT NULL,
                learnings_dir TEXT NOT NULL,
                options TEXT NOT NULL DEFAULT '{}',
                last_error TEXT,
                owner TEXT,
                seq INTEGER NOT NULL DEFAULT 0,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                completed_at REAL
            )""",
            "CREATE INDEX workflow_runs_updated ON workflow_runs(updated_at)",
            # The seed 002 data contract: one output per completed step (1-6).
            """CREATE TABLE workflow_steps (
                run_id TEXT NOT NULL REFERENCES workflow_runs(run_id) ON DELETE CASCADE,
                step INTEGER NOT NULL CHECK (step BETWEEN 1 AND 6),
                name TEXT NOT NULL,
                output TEXT NOT NULL,
                completed_at REAL NOT NULL,
                PRIMARY KEY (run_id, step)
            )""",
            # Step 5's phases, created from the step-3 config snapshot.
            """CREATE TABLE workflow_phases (
                run_id TEXT NOT NULL REFERENCES workflow_runs(run_id) ON DELETE CASCADE,
                idx INTEGER NOT NULL,
                phase_id TEXT NOT NULL,
                agent TEXT NOT NULL,
                state TEXT NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0,
                memory_file TEXT NOT NULL,
                memory_sha256 TEXT,
                prompt_sha256 TEXT,
                started_at REAL,
                verified_at REAL,
                last_error TEXT,
                PRIMARY KEY (run_id, idx),
                UNIQUE (run_id, phase_id)
            )""",
            # Every transition, numbered per run: the audit trail and resume evidence.
            """CREATE TABLE workflow_transitions (
                run_id TEXT NOT NULL REFERENCES workflow_runs(run_id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                kind TEXT NOT NULL,
                phase_id TEXT,
                step INTEGER,
                from_state TEXT,
                to_state TEXT NOT NULL,
                detail TEXT,
                pid INTEGER,
                at REAL NOT NULL,
                PRIMARY KEY (run_id, seq)
            )""",
        ),
    ),
    6: (
        "telemetry: route feedback and the routing configs of the gray release",
        (
            # One row per route: the latest answer wins. ``correct`` is a JSON array of
            # qualified names; [] means "no skill was the right answer".
            """CREATE TABLE route_feedback (
                route_id TEXT PRIMARY KEY,
                correct TEXT NOT NULL,
                source TEXT NOT NULL DEFAULT 'cli',
                note TEXT,
                created_at REAL NOT NULL
            )""",
            # The overrides behind each config_id stamped on route events.
            """CREATE TABLE routing_configs (
                config_id TEXT PRIMARY KEY,
                overrides TEXT NOT NULL,
                share REAL NOT NULL,
                first_seen REAL NOT NULL,
                last_seen REAL NOT NULL
            )""",
        ),
    ),
    7: (
        "orchestration: a lease on the run's owner, so another worker resumes a dead one's run",
        (
            # Until when (the database's clock, Unix seconds) ``owner`` holds the run;
            # the owner renews it while it drives the run.
            "ALTER TABLE workflow_runs ADD COLUMN lease_until REAL",
        ),
    ),
    8: (
        "orchestration: domain learnings kept in a shared store (seed 002 step 0, O5)",
        (
            # One row per lesson of a domain, in the order they were learned; ``key`` is
            # the lesson normalised (case, spacing, attribution), so none is kept twice.
            # Used when the store is shared by many hosts; an embedded store keeps the
            # same lines in <learnings_dir>/<domain>.md.
            """CREATE TABLE learnings (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                domain TEXT NOT NULL,
                key TEXT NOT NULL,
                line TEXT NOT NULL,
                added_at REAL NOT NULL,
                UNIQUE (domain, key)
            )""",
        ),
    ),
    9: (
        "routing: each skill's routing fields (body sections and terms), by content key",
        (
            # A derived, per-machine cache: ``key`` hashes the skill's identity, its
            # SKILL.md stat and the field recipe; ``record`` is JSON.
            """CREATE TABLE routing_fields (
                key TEXT PRIMARY KEY,
                record TEXT NOT NULL,
                created_at REAL NOT NULL
            )""",
        ),
    ),
    10: (
        "orchestration: each phase's runner record and the process group of its live agent",
        (
            # JSON: which runner and model ran the phase's last attempt, its exit, latency
            # and token counts, and whether the agent wrote the memory file or its reply
            # was written for it.
            "ALTER TABLE workflow_phases ADD COLUMN runner TEXT",
            # JSON: the process group (host, pgid, leader start time) of the agent running
            # the phase now; cleared when its attempt ends. A resume checks it so that no
            # second agent ever runs beside one a killed worker left behind.
            "ALTER TABLE workflow_phases ADD COLUMN agent_process TEXT",
        ),
    ),
}


def latest_version() -> int:
    return max(MIGRATIONS)


_PG_TYPES = (
    (
        re.compile(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b"),
        "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    ),
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\bBLOB\b"), "BYTEA"),
    (re.compile(r"\bINTEGER\b"), "BIGINT"),
)


def statements(version: int, dialect: str) -> tuple[str, ...]:
    """Migration ``version``'s statements for ``dialect`` (``sqlite`` or ``postgresql``)."""
    stmts = MIGRATIONS[version][1]
    if dialect == "sqlite":
        return stmts
    out = []
    for stmt in stmts:
        for pattern, replacement in _PG_TYPES:
            stmt = pattern.sub(replacement, stmt)
        out.append(stmt)
    return tuple(out)
