"""PostgreSQL checkpoints: savers, inspection, retention, doctor and the event log."""
