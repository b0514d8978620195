"""Routing: recall, scoring, plans."""
