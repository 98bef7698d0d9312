"""Connections and queries: psycopg2 (Debian's python3-psycopg2).

Every statement runs through ``run``/``frame``, which turn a server error into
a DPermError (errors.py) keeping its SQLSTATE, message, detail and hint.
"""
import psycopg2
import psycopg2.extras
import pandas as pd

from .errors import DPermError, error_from_psycopg

__all__ = ["connect", "as_connection", "run", "frame", "scalar"]


def connect(dsn="", **kwargs):
    """A psycopg2 connection in autocommit mode.

    A release's charge commits in a transaction of its own whatever the
    caller does (docs/user-guide.md, *Budgets and the ledger*), so
    autocommit loses nothing, and an error does not leave a transaction
    aborted for the statements after it. ``dsn`` and ``kwargs`` are
    psycopg2.connect's (empty: the PG* environment variables).
    """
    try:
        conn = psycopg2.connect(dsn, **kwargs)
    except psycopg2.Error as exc:
        raise error_from_psycopg(exc) from exc
    conn.autocommit = True
    return conn


def as_connection(conn):
    """A psycopg2 connection from a connection, a DSN string or None (PG*)."""
    if conn is None or isinstance(conn, str):
        return connect(conn or "")
    if not hasattr(conn, "cursor"):
        raise DPermError(f"not a connection or a DSN: {conn!r}")
    return conn


def run(conn, sql, params=None):
    """Executes one statement; (column names, rows)."""
    try:
        with conn.cursor() as cur:
            cur.execute(sql, params)
            if cur.description is None:
                return [], []
            return [c.name for c in cur.description], cur.fetchall()
    except psycopg2.Error as exc:
        raise error_from_psycopg(exc) from exc


def frame(conn, sql, params=None):
    """The result of one query as a pandas DataFrame."""
    columns, rows = run(conn, sql, params)
    return pd.DataFrame.from_records(rows, columns=columns)


def scalar(conn, sql, params=None):
    """The first column of the first row (None without rows)."""
    _, rows = run(conn, sql, params)
    return rows[0][0] if rows else None
