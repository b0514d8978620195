"""Execution: runners, the fallback state machine, repair."""
