"""Checkpoint storage: serializer, URL helpers, inspection, the tool ledger, the lease.

``sqlite/`` holds the SQLite savers and their maintenance (retention, doctor, recover),
``postgres/`` the PostgreSQL ones, and ``sql/`` the SQL layer the learning store and the event
log share. The public paths are :mod:`noema_graph.persistence` and :mod:`noema_graph.inspect`.
"""
