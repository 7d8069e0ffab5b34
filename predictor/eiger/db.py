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
under WAL with a long busy timeout; named rows are created with ``INSERT ... ON CONFLICT DO NOTHING``
then read back, and transactions that hit a lock, deadlock or serialization failure are retried.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pandas as pd
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

SCHEMA_VERSION = 1
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
        if self.dialect == "sqlite":
            if u.database and u.database != ":memory:":
                Path(u.database).parent.mkdir(parents=True, exist_ok=True)
            self.engine = sa.create_engine(self.url, echo=echo, connect_args={"timeout": 120})
            event.listen(self.engine, "connect", _sqlite_on_connect)
            event.listen(self.engine, "begin", _sqlite_on_begin)
        else:
            self.engine = sa.create_engine(self.url, echo=echo, pool_pre_ping=True)
        self._create_schema()

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
    def _create_schema(self) -> None:
        def create(conn):
            metadata.create_all(conn, checkfirst=True)
            row = conn.execute(sa.select(eiger_meta.c.value).where(eiger_meta.c.key == "schema_version")).first()
            if row is None:
                self._insert_ignore(conn, eiger_meta, [{"key": "schema_version", "value": str(SCHEMA_VERSION)}])
            elif row[0] != str(SCHEMA_VERSION):
                raise DatabaseError(f"{self.url}: trials database has schema version {row[0]}, this Portcast "
                                    f"uses {SCHEMA_VERSION}")

        try:
            self._transaction(create)
        except OperationalError as exc:
            raise DatabaseError(f"cannot open the trials database {self.url}: {exc.orig}") from None
        except sa.exc.DatabaseError as exc:  # e.g. SQLite: "file is not a database"
            raise DatabaseError(f"{self.url}: not a trials database ({exc.orig})") from None

    # ------------------------------------------------------------------------------------------
    def import_record(self, fingerprint: str) -> dict | None:
        """What :meth:`record_import` stored for an import with this fingerprint, or None."""
        import json

        key = f"import:{fingerprint[:40]}"
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(eiger_meta.c.value).where(eiger_meta.c.key == key)).first()
        return None if row is None else json.loads(row[0])

    def record_import(self, fingerprint: str, info: Mapping[str, Any]) -> None:
        """Remember an import (its fingerprint: the source's content and the options) so that the same
        import can be recognised and refused; ``info`` (JSON-able) says what it was."""
        import json

        key = f"import:{fingerprint[:40]}"

        def write(conn):
            conn.execute(sa.delete(eiger_meta).where(eiger_meta.c.key == key))
            conn.execute(sa.insert(eiger_meta), [{"key": key, "value": json.dumps(dict(info))}])

        self._transaction(write)

    def _transaction(self, fn: Callable[[sa.Connection], Any], attempts: int = 30) -> Any:
        """Run ``fn(conn)`` in one transaction, retrying on lock/deadlock/serialization failures and on
        races creating the schema."""
        for i in range(attempts):
            try:
                with self.engine.begin() as conn:
                    return fn(conn)
            except (OperationalError, IntegrityError, DBAPIError) as exc:
                text = str(exc.orig)
                race = "already exists" in text or "pg_type_typname_nsp_index" in text  # concurrent CREATE TABLE
                if i + 1 >= attempts or not (_retryable(exc) or race):
                    raise
                time.sleep(min(2.0, 0.02 * (2 ** min(i, 6))) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    def _insert_ignore(self, conn, table: sa.Table, rows: list[dict]) -> None:
        if not rows:
            return
        if self.dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        conn.execute(insert(table).on_conflict_do_nothing(), rows)

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

        def run(conn):
            mid = self._get_or_create(conn, machines, {"name": name}, {"description": description})
            ids = self._metric_ids(conn, vals, "machine")
            if ids:
                conn.execute(machine_metrics.delete().where(sa.and_(
                    machine_metrics.c.machine_id == mid, machine_metrics.c.metric_id.in_(list(ids.values())))))
                conn.execute(machine_metrics.insert(), [{"machine_id": mid, "metric_id": ids[k], "value": v}
                                                        for k, v in vals.items()])
            return mid

        return self._transaction(run)

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
        """Record many trials, ``batch_size`` per transaction.

        Parameters
        ----------
        records : mappings with the keyword arguments of :meth:`add_trial` (``metrics`` and ``results``
            for the value mappings).
        batch_size : trials per transaction.
        progress : optional callback ``progress(done, total)``.

        Returns
        -------
        trial ids, in the order of ``records``.
        """
        recs = [self._check_record(r, i) for i, r in enumerate(records)]
        ids: list[int] = []
        for start in range(0, len(recs), batch_size):
            batch = recs[start:start + batch_size]
            ids += self._transaction(lambda conn, b=batch: self._insert_batch(conn, b))
            if progress is not None:
                progress(len(ids), len(recs))
        return ids

    def _check_record(self, r: Mapping[str, Any], i: int) -> dict:
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
    cur.execute("PRAGMA busy_timeout = 120000")
    cur.execute("PRAGMA foreign_keys = ON")
    try:
        cur.execute("PRAGMA journal_mode = WAL")
    except Exception:  # noqa: BLE001 - e.g. a read-only or in-memory database keeps its journal mode
        pass
    cur.close()


def _sqlite_on_begin(conn) -> None:
    conn.exec_driver_sql("BEGIN IMMEDIATE")


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
