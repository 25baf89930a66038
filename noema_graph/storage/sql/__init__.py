"""The SQL layer shared by the learning store and the event log (SQLite and PostgreSQL)."""
