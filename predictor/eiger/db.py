"""The Eiger trials database (papers/001, Sec. III), through SQLAlchemy Core.

Schema (schema version 1)::

    applications    id, name (unique), description
    machines        id, name (unique), description
    datasets        id, application_id -> applications, name, description      unique (application_id, name)
    metrics         id, name (unique), kind ('application' | 'machine' | 'result'), units, description
    machine_metrics machine_id -> machines, metric_id -> metrics, value         (a machine's metric vector)
    trials          id, application_id, machine_id, dataset_id (nullable), kernel (nullable),
                    properties (JSON text: free metadata), created_at
    trial_metrics   trial_id -> trials, metric_id -> metrics, value             (application metrics)
    results         trial_id -> trials, metric_id -> metrics, value             (measured results)
    eiger_meta      key, value                                                  (schema version)

Metrics are user-defined: a metric is created the first time a trial, machine or result names it, and
keeps its kind. SQLite (the embedded default, in the user's data directory) and PostgreSQL (by URL) are
supported. Several processes may insert at once: SQLite write transactions start with ``BEGIN IMMEDIATE``
under WAL and wait up to 120 s for the lock (in short waits, so Ctrl-C is not held up); named rows are
created with ``INSERT ... ON CONFLICT DO NOTHING`` then read back, and transactions that hit a lock,
deadlock or serialization failure are retried.

Every write is one transaction: an import (:meth:`TrialsDB.import_once`, :meth:`TrialsDB.write`) adds all of
its rows and the record of the import, or nothing (killed, interrupted, disk full). A database that has
tables but not this schema's version marker is refused rather than extended, and a read-only one (a file
or directory nobody may write, a read-only file system) is read but never written.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import random
import stat
import sys
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

SCHEMA_VERSION = 1
#: how long a write waits for another process's lock before giving up
LOCK_WAIT_S = 120.0
#: SQLite's busy timeout: one wait for the lock inside SQLite, where Python cannot see Ctrl-C; a write retries
#: such waits until LOCK_WAIT_S
LOCK_POLL_S = 0.25
METRIC_KINDS = ("application", "machine", "result")

metadata = sa.MetaData()

eiger_meta = sa.Table("eiger_meta", metadata,
                      sa.Column("key", sa.String(64), primary_key=True),
                      sa.Column("value", sa.Text, nullable=False))
applications = sa.Table("applications", metadata,
                        sa.Column("id", sa.Integer, primary_key=True),
                        sa.Column("name", sa.String(255), nullable=False, unique=True),
                        sa.Column("description", sa.Text))
machines = sa.Table("machines", metadata,
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("name", sa.String(255), nullable=False, unique=True),
                    sa.Column("description", sa.Text))
datasets = sa.Table("datasets", metadata,
                    sa.Column("id", sa.Integer, primary_key=True),
                    sa.Column("application_id", sa.Integer, sa.ForeignKey("applications.id"), nullable=False),
                    sa.Column("name", sa.String(255), nullable=False),
                    sa.Column("description", sa.Text),
                    sa.UniqueConstraint("application_id", "name", name="uq_datasets_app_name"))
metrics = sa.Table("metrics", metadata,
                   sa.Column("id", sa.Integer, primary_key=True),
                   sa.Column("name", sa.String(255), nullable=False, unique=True),
                   sa.Column("kind", sa.String(16), nullable=False),
                   sa.Column("units", sa.String(64)),
                   sa.Column("description", sa.Text),
                   sa.CheckConstraint("kind IN ('application', 'machine', 'result')", name="ck_metrics_kind"))
machine_metrics = sa.Table("machine_metrics", metadata,
                           sa.Column("machine_id", sa.Integer, sa.ForeignKey("machines.id"), primary_key=True),
                           sa.Column("metric_id", sa.Integer, sa.ForeignKey("metrics.id"), primary_key=True),
                           sa.Column("value", sa.Float, nullable=False))
trials = sa.Table("trials", metadata,
                  sa.Column("id", sa.Integer, primary_key=True),
                  sa.Column("application_id", sa.Integer, sa.ForeignKey("applications.id"), nullable=False),
                  sa.Column("machine_id", sa.Integer, sa.ForeignKey("machines.id"), nullable=False),
                  sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id")),
                  sa.Column("kernel", sa.String(255)),
                  sa.Column("properties", sa.Text),
                  sa.Column("created_at", sa.String(32), nullable=False))
trial_metrics = sa.Table("trial_metrics", metadata,
                         sa.Column("trial_id", sa.Integer, sa.ForeignKey("trials.id"), primary_key=True),
                         sa.Column("metric_id", sa.Integer, sa.ForeignKey("metrics.id"), primary_key=True),
                         sa.Column("value", sa.Float, nullable=False))
results = sa.Table("results", metadata,
                   sa.Column("trial_id", sa.Integer, sa.ForeignKey("trials.id"), primary_key=True),
                   sa.Column("metric_id", sa.Integer, sa.ForeignKey("metrics.id"), primary_key=True),
                   sa.Column("value", sa.Float, nullable=False))
sa.Index("ix_trials_application", trials.c.application_id)
sa.Index("ix_trials_machine", trials.c.machine_id)


class DatabaseError(ValueError):
    """Bad input to the trials database, or a database that cannot be used."""


class WriteError(DatabaseError):
    """A write to the trials database failed (read-only, disk full, I/O error); its transaction was rolled
    back, so nothing of it was stored. ``where`` names the database, ``cause`` says why."""

    def __init__(self, where: str, cause: str):
        self.where, self.cause = where, cause
        super().__init__(f"{where}: cannot write the trials database: {cause}; nothing was written")


class AlreadyImported(DatabaseError):
    """:meth:`TrialsDB.import_once` found the import already recorded; ``record`` is what was recorded."""

    def __init__(self, record: dict):
        self.record = record
        super().__init__(f"already imported ({record.get('n')} {record.get('what')}, {record.get('date')})")


def user_data_dir(app: str = "portcast") -> Path:
    """The per-user data directory (what platformdirs calls ``user_data_dir``), computed here.

    Linux and other Unix: ``$XDG_DATA_HOME/<app>`` or ``~/.local/share/<app>``; macOS:
    ``~/Library/Application Support/<app>``; Windows: ``%LOCALAPPDATA%\\<app>``.
    """
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / app
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / app
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base / app


def default_url() -> str:
    """The database URL used when none is given: ``$PORTCAST_DB`` (a URL, or a path to an SQLite file),
    else ``sqlite:///<user data dir>/eiger.sqlite``."""
    env = os.environ.get("PORTCAST_DB")
    if env:
        return normalize_url(env)
    return "sqlite:///" + str(user_data_dir() / "eiger.sqlite")


def normalize_url(url_or_path: str) -> str:
    """A SQLAlchemy URL; a plain file path becomes an SQLite URL."""
    if "://" in url_or_path:
        for plain in ("postgres://", "postgresql://"):
            if url_or_path.startswith(plain):  # the driver Portcast depends on (psycopg2-binary)
                return "postgresql+psycopg2://" + url_or_path[len(plain):]
        return url_or_path
    return "sqlite:///" + str(Path(url_or_path).expanduser().absolute())


def _retryable(exc: BaseException) -> bool:
    text = str(getattr(exc, "orig", exc)).lower()
    return any(s in text for s in ("database is locked", "deadlock detected", "could not serialize",
                                   "database table is locked", "busy"))


class TrialsDB:
    """A trials database.

    Parameters
    ----------
    url : SQLAlchemy URL (``sqlite:///path``, ``postgresql://user@host:port/db``) or a path to an SQLite
        file; None for :func:`default_url`.
    echo : log SQL statements.

    Every write is one transaction, retried whole on lock, deadlock or serialization failures; a write that
    fails otherwise raises :class:`WriteError` with nothing of it stored. A database with tables but without
    the trials schema's version marker raises :class:`DatabaseError` (nothing is added to it).
    """

    def __init__(self, url: str | None = None, echo: bool = False):
        self.url = normalize_url(url) if url else default_url()
        try:
            u = sa.engine.make_url(self.url)
        except sa.exc.ArgumentError as exc:
            raise DatabaseError(f"invalid database URL {self.url!r}: {exc}") from None
        self.dialect = u.get_backend_name()
        if self.dialect not in ("sqlite", "postgresql"):
            raise DatabaseError(f"unsupported database {self.dialect!r} in {self.url!r}; use sqlite or postgresql")
        #: the SQLite file (None for PostgreSQL or an in-memory database)
        self.path: Path | None = None
        if self.dialect == "sqlite":
            if u.database and u.database != ":memory:" and not u.database.startswith("file:"):
                self.path = Path(u.database)
            connect_args: dict[str, Any] = {"timeout": LOCK_POLL_S}
            url_used = self.url
            if self.path is not None:
                if not self.path.parent.is_dir():
                    try:
                        self.path.parent.mkdir(parents=True, exist_ok=True)
                    except OSError as exc:
                        raise DatabaseError(f"{self.path}: cannot create the trials database's folder: "
                                            f"{exc.strerror or exc}") from None
                if self.path.exists() and self.read_only_cause() is not None:
                    # never written: opened read-only; without a write-ahead log beside it (nobody is writing
                    # it) as immutable, so that SQLite creates no WAL index either
                    wal = Path(f"{self.path}-wal")
                    url_used = (f"sqlite:///file:{self.path}?mode=ro&uri=true"
                                + ("" if wal.exists() else "&immutable=1"))
            self.engine = sa.create_engine(url_used, echo=echo, connect_args=connect_args)
            event.listen(self.engine, "connect", _sqlite_on_connect)
            event.listen(self.engine, "begin", _sqlite_on_begin)
        else:
            self.engine = sa.create_engine(self.url, echo=echo, pool_pre_ping=True)
        self._create_schema()

    @property
    def where(self) -> str:
        """The database as messages name it: the SQLite file, else the URL without its password."""
        if self.path is not None:
            return str(self.path)
        return self.engine.url.render_as_string(hide_password=True)

    def __repr__(self) -> str:
        return f"TrialsDB({self.engine.url.render_as_string(hide_password=True)!r})"

    def close(self) -> None:
        """Release the connections."""
        self.engine.dispose()

    def __enter__(self) -> "TrialsDB":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------
    def read_only_cause(self) -> str | None:
        """Why this SQLite database cannot be written, or None if it can: the file or its folder is on a
        read-only file system, has no write permission for anyone (a write-protected file is respected even
        by root), or is not writable by this user. Always None for PostgreSQL (the server decides)."""
        if self.path is None:
            return None
        for target, what in ((self.path, "the file"), (self.path.parent, f"its folder {self.path.parent}")):
            try:
                st = target.stat()
            except FileNotFoundError:
                continue
            except OSError as exc:
                return f"{what} cannot be read ({exc.strerror or exc})"
            try:
                if os.statvfs(target).f_flag & os.ST_RDONLY:
                    return f"{what} is on a read-only file system"
            except (OSError, AttributeError):  # no statvfs (Windows)
                pass
            mode = stat.S_IMODE(st.st_mode)
            if not mode & 0o222:
                return f"{what} is read-only (mode {mode:04o})"
            if not os.access(target, os.W_OK):
                return f"{what} is not writable by this user (mode {mode:04o}, owner uid {st.st_uid})"
        return None

    def _check_schema(self, conn) -> bool:
        """True when the trials schema (of this version) is there, False when the database is empty or lacks
        some of its tables; a :class:`DatabaseError` for another schema version or for a database holding
        other tables without the schema version."""
        names = set(sa.inspect(conn).get_table_names())
        if "eiger_meta" in names:
            row = conn.execute(sa.select(eiger_meta.c.value).where(eiger_meta.c.key == "schema_version")).first()
            if row is not None:
                if row[0] != str(SCHEMA_VERSION):
                    raise DatabaseError(f"{self.where}: trials database has schema version {row[0]}, this "
                                        f"Portcast uses {SCHEMA_VERSION}")
                return set(metadata.tables) <= names  # a table dropped by hand is created again
        if names:
            shown = ", ".join(sorted(names)[:6]) + (", ..." if len(names) > 6 else "")
            raise DatabaseError(f"{self.where}: not a trials database: it has {len(names)} table"
                                f"{'s' if len(names) != 1 else ''} ({shown}) but no Portcast schema version "
                                "(eiger_meta); nothing was added to it. Give a trials database, or a new or "
                                "empty file")
        return False

    def _create_schema(self) -> None:
        def create(conn):
            if self._check_schema(conn):  # another process created it meanwhile
                return
            metadata.create_all(conn, checkfirst=True)
            self._insert_ignore(conn, eiger_meta, [{"key": "schema_version", "value": str(SCHEMA_VERSION)}])
            self._check_schema(conn)

        if self.path is not None and not self.path.exists() and self.read_only_cause() is not None:
            raise DatabaseError(f"{self.where}: cannot create the trials database: {self.read_only_cause()}")
        try:
            with self.engine.connect() as conn:  # a read: a trials database that exists is never written here
                if self._check_schema(conn):
                    return
            self._transaction(create)
        except WriteError as exc:
            raise DatabaseError(f"{exc.where}: cannot create the trials database's tables: {exc.cause}") from None
        except OperationalError as exc:
            cause = self.read_only_cause() if self.path is not None and not self.path.exists() else None
            raise DatabaseError(f"cannot open the trials database {self.where}: {cause or exc.orig}") from None
        except sa.exc.DatabaseError as exc:  # e.g. SQLite: "file is not a database"
            raise DatabaseError(f"{self.where}: not a trials database ({exc.orig})") from None

    # ------------------------------------------------------------------------------------------
    def import_record(self, fingerprint: str) -> dict | None:
        """What was recorded for the import with this fingerprint (:meth:`import_once`), or None."""
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(eiger_meta.c.value)
                               .where(eiger_meta.c.key == _import_key(fingerprint))).first()
        return None if row is None else json.loads(row[0])

    def import_once(self, fingerprint: str, info: Mapping[str, Any],
                    work: Callable[["TrialsWriter"], tuple[int, str]], append: bool = False) -> dict:
        """Run an import and record it, in one transaction: all of it is stored, or nothing.

        Parameters
        ----------
        fingerprint : identifies the import (a hash of the source's content and the options).
        info : JSON-able description stored in the record (e.g. ``source``; ``id`` to recognise this very
            import later; ``date`` is added).
        work : ``work(writer) -> (n, what)`` writes through the :class:`TrialsWriter`, returning the number
            of things imported and what they are (``"trials"``, ``"machines"``).
        append : import even if this fingerprint was recorded before.

        Returns
        -------
        the record stored (``info`` with ``n``, ``what``, ``date``).

        Raises
        ------
        AlreadyImported : the fingerprint was recorded (by an earlier import, or by one that ran at the same
            time and committed first); nothing was written.
        WriteError : the database could not be written; nothing was written.

        The record is claimed first (``INSERT ... ON CONFLICT DO NOTHING``): a concurrent import of the same
        fingerprint waits for this one's transaction and then finds it recorded (PostgreSQL), or waits for
        the write lock (SQLite), so exactly one of them imports.
        """
        key = _import_key(fingerprint)

        def run(conn):
            record = {"id": uuid.uuid4().hex, **dict(info),
                      "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
            if append:
                conn.execute(sa.delete(eiger_meta).where(eiger_meta.c.key == key))
            claimed = self._insert_ignore(conn, eiger_meta, [{"key": key, "value": json.dumps(record)}])
            if not claimed:
                row = conn.execute(sa.select(eiger_meta.c.value).where(eiger_meta.c.key == key)).scalar_one()
                raise AlreadyImported(json.loads(row))
            n, what = work(TrialsWriter(self, conn))
            record.update(n=int(n), what=str(what))
            conn.execute(sa.update(eiger_meta).where(eiger_meta.c.key == key).values(value=json.dumps(record)))
            return record

        return self._transaction(run)

    def write(self, fn: Callable[["TrialsWriter"], Any]) -> Any:
        """Run ``fn(writer)`` in one transaction (retried whole on lock, deadlock or serialization failures);
        what it writes through the :class:`TrialsWriter` is stored all together or not at all."""
        return self._transaction(lambda conn: fn(TrialsWriter(self, conn)))

    def _transaction(self, fn: Callable[[sa.Connection], Any], attempts: int = 30) -> Any:
        """Run ``fn(conn)`` in one write transaction, retrying while another process holds the lock (up to
        :data:`LOCK_WAIT_S`), on deadlock or serialization failures and on races creating the schema (up to
        ``attempts`` times); a failure to write (read-only, disk full, I/O error) is a :class:`WriteError`
        after the rollback."""
        cause = self.read_only_cause()
        if cause is not None:
            raise WriteError(self.where, cause)
        deadline = time.monotonic() + LOCK_WAIT_S
        i = 0
        while True:
            try:
                with self.engine.connect().execution_options(portcast_write=True) as conn:
                    with conn.begin():
                        return fn(conn)
            except (OperationalError, IntegrityError, DBAPIError) as exc:
                text = str(exc.orig)
                race = "already exists" in text or "pg_type_typname_nsp_index" in text  # concurrent CREATE TABLE
                locked = "locked" in text.lower() and time.monotonic() < deadline
                i += 1
                if locked or (i < attempts and (_retryable(exc) or race)):
                    time.sleep(min(0.1 if locked else 2.0, 0.02 * (2 ** min(i, 6))) * (0.5 + random.random()))
                    continue
                denied = any(t in text.lower() for t in ("read-only", "readonly", "permission denied"))
                if isinstance(exc, OperationalError) or denied:  # e.g. PostgreSQL: a read-only role or server
                    raise WriteError(self.where, self.read_only_cause() or _first_line(text)) from None
                raise

    def _insert_ignore(self, conn, table: sa.Table, rows: list[dict]) -> int:
        """Insert the rows that do not collide with existing ones; returns how many were inserted."""
        if not rows:
            return 0
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        stmt = insert(table).on_conflict_do_nothing()
        if len(rows) == 1:
            return max(0, conn.execute(stmt, rows[0]).rowcount)
        conn.execute(stmt, rows)
        return len(rows)

    def _get_or_create(self, conn, table: sa.Table, keys: dict, extra: dict | None = None) -> int:
        cond = sa.and_(*[table.c[k] == v for k, v in keys.items()])
        row = conn.execute(sa.select(table.c.id).where(cond)).first()
        if row is not None:
            return int(row[0])
        self._insert_ignore(conn, table, [{**keys, **(extra or {})}])
        return int(conn.execute(sa.select(table.c.id).where(cond)).scalar_one())

    def _metric_ids(self, conn, names: Iterable[str], kind: str) -> dict[str, int]:
        names = sorted(set(names))
        out: dict[str, int] = {}
        if not names:
            return out
        existing = conn.execute(sa.select(metrics.c.id, metrics.c.name, metrics.c.kind)
                                .where(metrics.c.name.in_(names))).all()
        for mid, name, k in existing:
            out[name] = int(mid)
            if k != kind:
                raise DatabaseError(f"metric {name!r} is already defined as a {k} metric, cannot use it as a "
                                    f"{kind} metric")
        missing = [n for n in names if n not in out]
        if missing:
            self._insert_ignore(conn, metrics, [{"name": n, "kind": kind} for n in missing])
            for mid, name, k in conn.execute(sa.select(metrics.c.id, metrics.c.name, metrics.c.kind)
                                             .where(metrics.c.name.in_(missing))).all():
                if k != kind:
                    raise DatabaseError(f"metric {name!r} is already defined as a {k} metric, cannot use it "
                                        f"as a {kind} metric")
                out[name] = int(mid)
        return out

    # ------------------------------------------------------------------------------------------
    def define_metric(self, name: str, kind: str, units: str | None = None, description: str | None = None
                      ) -> int:
        """Create (or find) a user-defined metric.

        Parameters
        ----------
        name : unique metric name.
        kind : ``"application"``, ``"machine"`` or ``"result"``.
        units, description : free text, stored when the metric is created or were empty.

        Returns
        -------
        metric id.
        """
        _check_name(name, "metric name")
        if kind not in METRIC_KINDS:
            raise DatabaseError(f"metric kind must be one of {METRIC_KINDS}, got {kind!r}")

        def run(conn):
            mid = self._metric_ids(conn, [name], kind)[name]
            upd = {k: v for k, v in (("units", units), ("description", description)) if v is not None}
            if upd:
                conn.execute(metrics.update().where(metrics.c.id == mid).values(**upd))
            return mid

        return self._transaction(run)

    def add_application(self, name: str, description: str | None = None) -> int:
        """Create (or find) an application; returns its id."""
        _check_name(name, "application name")
        return self._transaction(lambda c: self._get_or_create(c, applications, {"name": name},
                                                               {"description": description}))

    def add_dataset(self, application: str, name: str, description: str | None = None) -> int:
        """Create (or find) a dataset of an application; returns its id."""
        _check_name(application, "application name")
        _check_name(name, "dataset name")

        def run(conn):
            aid = self._get_or_create(conn, applications, {"name": application})
            return self._get_or_create(conn, datasets, {"application_id": aid, "name": name},
                                       {"description": description})

        return self._transaction(run)

    def add_machine(self, name: str, metric_values: Mapping[str, float] | None = None,
                    description: str | None = None) -> int:
        """Create (or find) a machine and set its metric vector (values given replace stored ones), in one
        transaction; see :meth:`TrialsWriter.add_machine`.

        Returns
        -------
        machine id.
        """
        return self.write(lambda w: w.add_machine(name, metric_values, description))

    def add_trial(self, application: str, machine: str, metric_values: Mapping[str, float],
                  result_values: Mapping[str, float], dataset: str | None = None, kernel: str | None = None,
                  properties: Mapping[str, Any] | None = None) -> int:
        """Record one trial.

        Parameters
        ----------
        application, machine : names (created when new).
        metric_values : application metrics of the trial.
        result_values : measured results, e.g. ``{"kernel_time": 12.5}``.
        dataset : dataset name within the application (optional).
        kernel : kernel or region name (optional).
        properties : free JSON-serialisable metadata.

        Returns
        -------
        trial id.
        """
        return self.add_trials([dict(application=application, machine=machine, metrics=metric_values,
                                     results=result_values, dataset=dataset, kernel=kernel,
                                     properties=properties)])[0]

    def add_trials(self, records: Sequence[Mapping[str, Any]], batch_size: int = 500,
                   progress: Callable[[int, int], None] | None = None) -> list[int]:
        """Record many trials in one transaction: all of them, or (killed, interrupted, disk full) none.
        See :meth:`TrialsWriter.add_trials`.

        Returns
        -------
        trial ids, in the order of ``records``.
        """
        recs = [_check_record(r, i) for i, r in enumerate(records)]
        return self.write(lambda w: w._add_checked(recs, batch_size, progress))

    def _insert_batch(self, conn, batch: list[dict]) -> list[int]:
        app_ids = {a: self._get_or_create(conn, applications, {"name": a})
                   for a in sorted({r["application"] for r in batch})}
        mach_ids = {m: self._get_or_create(conn, machines, {"name": m}) for m in sorted({r["machine"] for r in batch})}
        ds_ids = {(a, d): self._get_or_create(conn, datasets, {"application_id": app_ids[a], "name": d})
                  for a, d in sorted({(r["application"], r["dataset"]) for r in batch if r["dataset"] is not None})}
        met_ids = self._metric_ids(conn, {k for r in batch for k in r["metrics"]}, "application")
        res_ids = self._metric_ids(conn, {k for r in batch for k in r["results"]}, "result")
        now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")
        ids = []
        tm_rows, res_rows = [], []
        for r in batch:
            tid = int(conn.execute(trials.insert().returning(trials.c.id), {
                "application_id": app_ids[r["application"]], "machine_id": mach_ids[r["machine"]],
                "dataset_id": ds_ids.get((r["application"], r["dataset"])), "kernel": r["kernel"],
                "properties": r["properties"], "created_at": now}).scalar_one())
            ids.append(tid)
            tm_rows += [{"trial_id": tid, "metric_id": met_ids[k], "value": v} for k, v in r["metrics"].items()]
            res_rows += [{"trial_id": tid, "metric_id": res_ids[k], "value": v} for k, v in r["results"].items()]
        if tm_rows:
            conn.execute(trial_metrics.insert(), tm_rows)
        if res_rows:
            conn.execute(results.insert(), res_rows)
        return ids

    # ------------------------------------------------------------------------------------------
    def count_trials(self) -> int:
        """Number of trials stored."""
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(trials)).scalar_one())

    def names(self, what: str) -> list[str]:
        """Sorted names of ``"applications"``, ``"machines"`` or ``"metrics"``."""
        table = {"applications": applications, "machines": machines, "metrics": metrics}.get(what)
        if table is None:
            raise DatabaseError(f"names() takes applications, machines or metrics, got {what!r}")
        with self.engine.connect() as conn:
            return sorted(r[0] for r in conn.execute(sa.select(table.c.name)))

    def metric_kinds(self) -> dict[str, str]:
        """Kind of every metric, by name."""
        with self.engine.connect() as conn:
            return {n: k for n, k in conn.execute(sa.select(metrics.c.name, metrics.c.kind))}

    def machines_frame(self) -> pd.DataFrame:
        """Machine metric vectors: one row per machine (index = name), one column per machine metric."""
        q = (sa.select(machines.c.name.label("machine"), metrics.c.name.label("metric"), machine_metrics.c.value)
             .select_from(machine_metrics.join(machines).join(metrics)))
        with self.engine.connect() as conn:
            long = pd.DataFrame(conn.execute(q).all(), columns=["machine", "metric", "value"])
        all_names = self.names("machines")
        if long.empty:
            return pd.DataFrame(index=pd.Index(all_names, name="machine"))
        wide = long.pivot(index="machine", columns="metric", values="value")
        wide.columns.name = None
        return wide.reindex(all_names)

    def trials_frame(self, machine_metrics_too: bool = True) -> pd.DataFrame:
        """All trials as one wide table.

        Parameters
        ----------
        machine_metrics_too : join each trial's machine metric vector.

        Returns
        -------
        DataFrame sorted by trial id with ``trial_id, application, machine, dataset, kernel, properties``,
        one column per application metric, per machine metric (if asked) and per result (missing values
        are NaN). ``df.attrs["metric_kinds"]`` maps every metric column to its kind.
        """
        base = (sa.select(trials.c.id.label("trial_id"), applications.c.name.label("application"),
                          machines.c.name.label("machine"), datasets.c.name.label("dataset"), trials.c.kernel,
                          trials.c.properties)
                .select_from(trials.join(applications, trials.c.application_id == applications.c.id)
                             .join(machines, trials.c.machine_id == machines.c.id)
                             .outerjoin(datasets, trials.c.dataset_id == datasets.c.id))
                .order_by(trials.c.id))
        cols = ["trial_id", "application", "machine", "dataset", "kernel", "properties"]
        with self.engine.connect() as conn:
            df = pd.DataFrame(conn.execute(base).all(), columns=cols)
            parts = []
            for table in (trial_metrics, results):
                q = (sa.select(table.c.trial_id, metrics.c.name, table.c.value)
                     .select_from(table.join(metrics, table.c.metric_id == metrics.c.id)))
                long = pd.DataFrame(conn.execute(q).all(), columns=["trial_id", "metric", "value"])
                if not long.empty:
                    w = long.pivot(index="trial_id", columns="metric", values="value")
                    w.columns.name = None
                    parts.append(w)
        kinds = self.metric_kinds()
        for w in parts:
            df = df.join(w, on="trial_id")
        if machine_metrics_too and not df.empty:
            mf = self.machines_frame()
            if mf.shape[1]:
                df = df.join(mf, on="machine")
        df.attrs["metric_kinds"] = {c: kinds[c] for c in df.columns if c in kinds}
        return df.reset_index(drop=True)


def _sqlite_on_connect(dbapi_conn, _record) -> None:
    dbapi_conn.isolation_level = None  # let the "begin" hook issue BEGIN IMMEDIATE itself
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA busy_timeout = {int(LOCK_POLL_S * 1000)}")
    cur.execute("PRAGMA foreign_keys = ON")
    try:
        cur.execute("PRAGMA journal_mode = WAL")
    except Exception:  # noqa: BLE001 - e.g. a read-only or in-memory database keeps its journal mode
        pass
    cur.close()


def _sqlite_on_begin(conn) -> None:
    # a write transaction takes the write lock at once (so two writers cannot deadlock upgrading); a read
    # begins deferred: it takes no lock a writer waits for, and works on a read-only database
    write = conn.get_execution_options().get("portcast_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


def _import_key(fingerprint: str) -> str:
    return f"import:{fingerprint[:40]}"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


class TrialsWriter:
    """Writes inside one transaction of a :class:`TrialsDB` (:meth:`TrialsDB.write`,
    :meth:`TrialsDB.import_once`): everything written through it is committed together or not at all. It
    has the writing methods of :class:`TrialsDB` (``add_machine``, ``add_trials``), so the import functions
    of :mod:`predictor.eiger.trials_import` take either."""

    def __init__(self, db: TrialsDB, conn: sa.Connection):
        self.db, self.conn = db, conn

    def add_machine(self, name: str, metric_values: Mapping[str, float] | None = None,
                    description: str | None = None) -> int:
        """Create (or find) a machine and set its metric vector (values given replace stored ones).

        Parameters
        ----------
        name : machine name.
        metric_values : machine metrics, e.g. ``{"memory_bandwidth_gbs": 320.0}``.
        description : free text.

        Returns
        -------
        machine id.
        """
        _check_name(name, "machine name")
        vals = _check_values(metric_values or {}, f"machine {name!r}")
        db, conn = self.db, self.conn
        mid = db._get_or_create(conn, machines, {"name": name}, {"description": description})
        ids = db._metric_ids(conn, vals, "machine")
        if ids:
            conn.execute(machine_metrics.delete().where(sa.and_(
                machine_metrics.c.machine_id == mid, machine_metrics.c.metric_id.in_(list(ids.values())))))
            conn.execute(machine_metrics.insert(), [{"machine_id": mid, "metric_id": ids[k], "value": v}
                                                    for k, v in vals.items()])
        return mid

    def add_trials(self, records: Sequence[Mapping[str, Any]], batch_size: int = 500,
                   progress: Callable[[int, int], None] | None = None) -> list[int]:
        """Record many trials.

        Parameters
        ----------
        records : mappings with the keyword arguments of :meth:`TrialsDB.add_trial` (``metrics`` and
            ``results`` for the value mappings).
        batch_size : trials per group of statements (and per ``progress`` call).
        progress : optional callback ``progress(done, total)``.

        Returns
        -------
        trial ids, in the order of ``records``.
        """
        return self._add_checked([_check_record(r, i) for i, r in enumerate(records)], batch_size, progress)

    def _add_checked(self, recs: list[dict], batch_size: int, progress: Callable[[int, int], None] | None
                     ) -> list[int]:
        ids: list[int] = []
        for start in range(0, len(recs), batch_size):
            ids += self.db._insert_batch(self.conn, recs[start:start + batch_size])
            if progress is not None:
                progress(len(ids), len(recs))
        return ids


def _check_record(r: Mapping[str, Any], i: int) -> dict:
    where = f"trial {i}"
    for key in ("application", "machine"):
        _check_name(r.get(key), f"{where}: {key}")
    for key in ("dataset", "kernel"):
        if r.get(key) is not None:
            _check_name(r[key], f"{where}: {key}")
    props = r.get("properties")
    try:
        props_text = json.dumps(dict(props), sort_keys=True, allow_nan=False) if props else None
    except (TypeError, ValueError) as exc:
        raise DatabaseError(f"{where}: properties are not JSON-serialisable: {exc}") from None
    unknown = set(r) - {"application", "machine", "metrics", "results", "dataset", "kernel", "properties"}
    if unknown:
        raise DatabaseError(f"{where}: unknown fields {sorted(unknown)}")
    res = _check_values(r.get("results") or {}, where)
    if not res:
        raise DatabaseError(f"{where}: a trial needs at least one result")
    return {"application": r["application"], "machine": r["machine"], "dataset": r.get("dataset"),
            "kernel": r.get("kernel"), "properties": props_text,
            "metrics": _check_values(r.get("metrics") or {}, where), "results": res}


def _check_name(name: Any, what: str) -> None:
    if not isinstance(name, str) or not name.strip():
        raise DatabaseError(f"{what} must be a non-empty string, got {name!r}")
    if len(name) > 255:
        raise DatabaseError(f"{what} is longer than 255 characters: {name[:40]!r}...")


def _check_values(vals: Mapping[str, Any], where: str) -> dict[str, float]:
    out = {}
    for k, v in vals.items():
        _check_name(k, f"{where}: metric name")
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise DatabaseError(f"{where}: metric {k!r} has a non-numeric value {v!r}") from None
        if not math.isfinite(f):
            raise DatabaseError(f"{where}: metric {k!r} has a non-finite value {v!r}")
        out[str(k)] = f
    return out
