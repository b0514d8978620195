"""Telemetry: route events (T1), metrics (T2), tuning and gray release (T3), spans."""
