"""Self-contained HTML reports (``doctor --html``, ``stats --html``): page and charts."""
