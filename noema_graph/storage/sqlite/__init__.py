"""SQLite checkpoint files: savers, delta history, writer thread, stores, maintenance."""
