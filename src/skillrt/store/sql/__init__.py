"""The domain interfaces in SQL: one implementation of each, shared by the SQLite and
PostgreSQL backends (:class:`~skillrt.store.sql.base.SqlStore`).

Every query is written once, in the SQL both databases accept (``?`` placeholders,
``INSERT ... ON CONFLICT``, ``RETURNING``); where they differ the connection's
:class:`~skillrt.store.sql.base.Dialect` says how (a row lock, the database clock).
"""
