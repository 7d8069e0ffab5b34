"""The counter record: what the DVFS models read about one kernel or interval at a base clock.

A record holds the measured run time at the base clock and the counters each model needs. All times are in
one unit of the user's choice (the timeline model uses ns); predictions come back in that unit.

=================  ========  ==============================================================================
field              models    meaning
=================  ========  ==============================================================================
name               --        kernel or interval name (optional)
base_mhz           all       core clock the counters were read at (MHz, > 0)
total              all       run time at the base clock
load_stall         STALL     cycles (as time) the SM issued nothing while a load miss was outstanding
                   CRISP-L
store_stall        CRISP(-L) stall time with no load outstanding and the store queue full (T_CSP^Stall)
lcp                CRISP     load critical path length (T_Memory of Eq. 4)
lcp_comp           CRISP     computation overlapped by the loads of that path (T_LCP^Comp)
adjusted_lcp       CRISP     the paper's hardware counter (LCP with load stalls added); CRISP falls back to
                             it (with load_stall) when lcp / lcp_comp are absent
load_outstanding   CRISP-L   time with at least one load outstanding
lead               LEAD      summed latency of leading loads
miss_count         MISS      number of contributor misses
miss_latency       MISS      the fixed memory latency MISS multiplies them by
crit               CRIT      critical path of loads
=================  ========  ==============================================================================

Files: JSON ``{"schema": "portcast.dvfs.counters", "schema_version": 1, "records": [{field: value}]}`` (a
bare list of records is accepted too), or CSV with a header row naming the fields. Fields a model does not
need may be missing or empty. Records are checked on load: negative or non-finite values, stalls longer
than the total, a critical path longer than the total and similar contradictions are rejected with the
file, the row and the field in the message.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Iterable, Sequence

import pandas as pd

from core.atomic import atomic_write_text
from core.jsonfile import JsonFileError, read_json

SCHEMA = "portcast.dvfs.counters"
SCHEMA_VERSION = 1

#: Numeric fields in file order.
NUMERIC_FIELDS = (
    "base_mhz",
    "total",
    "load_stall",
    "store_stall",
    "lcp",
    "lcp_comp",
    "adjusted_lcp",
    "load_outstanding",
    "lead",
    "miss_count",
    "miss_latency",
    "crit",
)
FIELDS = ("name",) + NUMERIC_FIELDS


class CounterError(ValueError):
    """A counter record or file that cannot be used; the message names the place and the field."""


@dataclasses.dataclass(frozen=True)
class CounterRecord:
    """Counters of one kernel or interval at a base clock (see the module docstring for the fields).

    Missing counters are ``nan``; a model that needs one raises :class:`CounterError` naming it.
    """

    base_mhz: float
    total: float
    load_stall: float = math.nan
    store_stall: float = math.nan
    lcp: float = math.nan
    lcp_comp: float = math.nan
    adjusted_lcp: float = math.nan
    load_outstanding: float = math.nan
    lead: float = math.nan
    miss_count: float = math.nan
    miss_latency: float = math.nan
    crit: float = math.nan
    name: str = ""

    def has(self, field: str) -> bool:
        """Whether ``field`` is present (not nan).

        Parameters
        ----------
        field : str

        Returns
        -------
        bool
        """
        return not math.isnan(getattr(self, field))

    def require(self, *fields: str, model: str = "") -> None:
        """Raise :class:`CounterError` unless every field is present.

        Parameters
        ----------
        *fields : str
            Field names.
        model : str
            Name of the model that needs them (for the message).
        """
        for f in fields:
            if not self.has(f):
                who = f" {self.name!r}" if self.name else ""
                raise CounterError(f"record{who}: model {model} needs field '{f}', which is missing")

    def to_dict(self) -> dict:
        """Plain dict (missing counters left out).

        Returns
        -------
        dict
        """
        d = {"name": self.name} if self.name else {}
        for f in NUMERIC_FIELDS:
            v = getattr(self, f)
            if not math.isnan(v):
                d[f] = float(v)
        return d

    def validate(self, where: str = "record") -> "CounterRecord":
        """Check the record; return it unchanged or raise :class:`CounterError`.

        Parameters
        ----------
        where : str
            Prefix for messages, e.g. ``"counters.csv line 3"``.

        Returns
        -------
        CounterRecord
        """
        for f in NUMERIC_FIELDS:
            v = getattr(self, f)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise CounterError(f"{where}: field '{f}' must be a number (got {v!r})")
            if math.isnan(v):
                if f in ("base_mhz", "total"):
                    raise CounterError(f"{where}: field '{f}' is required")
                continue
            if math.isinf(v):
                raise CounterError(f"{where}: field '{f}' must be finite (got {v})")
            if v < 0:
                raise CounterError(f"{where}: field '{f}' must not be negative (got {v})")
        if self.base_mhz <= 0:
            raise CounterError(f"{where}: field 'base_mhz' must be positive (got {self.base_mhz})")
        if self.total <= 0:
            raise CounterError(f"{where}: field 'total' must be positive (got {self.total})")
        tol = 1e-9 * self.total

        def bound(expr_fields: Sequence[str], limit_field: str, what: str) -> None:
            vals = [getattr(self, f) for f in expr_fields]
            lim = getattr(self, limit_field)
            if any(math.isnan(v) for v in vals) or math.isnan(lim):
                return
            if sum(vals) > lim + tol:
                lhs = " + ".join(f"{f} ({getattr(self, f):g})" for f in expr_fields)
                raise CounterError(f"{where}: field '{expr_fields[-1]}': {what}: {lhs} > {limit_field} ({lim:g})")

        bound(["load_stall"], "total", "stalls longer than the total")
        bound(["store_stall"], "total", "stalls longer than the total")
        bound(["load_stall", "store_stall"], "total", "stalls longer than the total")
        bound(["lcp"], "total", "load critical path longer than the total")
        bound(["lcp", "store_stall"], "total", "critical path and store stalls longer than the total")
        bound(["lcp_comp"], "lcp", "overlapped computation longer than the load critical path")
        bound(["adjusted_lcp"], "total", "adjusted critical path longer than the total")
        bound(["adjusted_lcp", "store_stall"], "total", "adjusted critical path and store stalls longer than the total")
        bound(["load_stall"], "adjusted_lcp", "load stalls longer than the adjusted critical path")
        bound(["load_outstanding"], "total", "load-outstanding time longer than the total")
        bound(["load_outstanding", "store_stall"], "total", "load-outstanding time and store stalls longer than the "
                                                            "total")
        bound(["load_stall"], "load_outstanding", "load stalls longer than the load-outstanding time")
        bound(["lead"], "total", "leading-load time longer than the total")
        bound(["crit"], "total", "critical path longer than the total")
        return self


def _record_from_mapping(row: dict, where: str, default_base_mhz: float | None = None) -> CounterRecord:
    unknown = [k for k in row if k not in FIELDS]
    if unknown:
        raise CounterError(f"{where}: unknown field '{unknown[0]}' (known: {', '.join(FIELDS)})")
    kw: dict = {}
    for f in NUMERIC_FIELDS:
        v = row.get(f)
        if v is None or (isinstance(v, str) and v.strip() == ""):
            kw[f] = math.nan
            continue
        if isinstance(v, bool):
            raise CounterError(f"{where}: field '{f}' must be a number (got {v!r})")
        try:
            kw[f] = float(v)
        except (TypeError, ValueError):
            raise CounterError(f"{where}: field '{f}' must be a number (got {v!r})") from None
        if math.isnan(kw[f]):
            raise CounterError(f"{where}: field '{f}' is NaN")
    name = row.get("name")
    kw["name"] = "" if name is None or (isinstance(name, float) and math.isnan(name)) else str(name)
    if math.isnan(kw["base_mhz"]) and default_base_mhz is not None:
        kw["base_mhz"] = float(default_base_mhz)
    for req in ("base_mhz", "total"):
        if math.isnan(kw[req]):
            raise CounterError(f"{where}: field '{req}' is required")
    return CounterRecord(**kw).validate(where)


def load_counters(path: str | os.PathLike, default_base_mhz: float | None = None) -> list[CounterRecord]:
    """Read and validate a counter file (JSON or CSV, chosen by extension).

    Parameters
    ----------
    path : path-like
        ``*.json`` or ``*.csv``.
    default_base_mhz : float, optional
        Base clock for records that do not state one.

    Returns
    -------
    list of CounterRecord
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such counter file")
    suffix = p.suffix.lower()
    if suffix == ".json":
        try:
            doc = read_json(p, what="counter file")
        except JsonFileError as exc:
            raise CounterError(str(exc)) from None
        if isinstance(doc, dict):
            if doc.get("schema", SCHEMA) != SCHEMA:
                raise CounterError(f"{p}: schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
            ver = doc.get("schema_version", SCHEMA_VERSION)
            if ver != SCHEMA_VERSION:
                raise CounterError(f"{p}: schema_version {ver!r} is not supported (this Portcast reads "
                                   f"{SCHEMA_VERSION})")
            if "records" not in doc:
                raise CounterError(f"{p}: missing 'records' list")
            rows = doc["records"]
        else:
            rows = doc
        if not isinstance(rows, list) or not rows:
            raise CounterError(f"{p}: 'records' must be a non-empty list of objects")
        out = []
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise CounterError(f"{p} record {i}: must be an object")
            out.append(_record_from_mapping(row, f"{p} record {i}", default_base_mhz))
        return out
    if suffix == ".csv":
        try:
            df = pd.read_csv(p, dtype=str, keep_default_na=False, comment="#")
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise CounterError(f"{p}: not a readable CSV ({exc})") from None
        if df.empty:
            raise CounterError(f"{p}: no records")
        # file line of each data row (comment and blank lines are skipped by the reader)
        content = [
            n + 1 for n, ln in enumerate(p.read_text().splitlines()) if ln.strip() and not ln.lstrip().startswith("#")
        ]
        line_no = content[1:] + [None] * max(0, len(df) - len(content) + 1)
        out = []
        for i, row in enumerate(df.to_dict("records")):
            out.append(_record_from_mapping(row, f"{p} line {line_no[i]}", default_base_mhz))
        return out
    raise CounterError(f"{p}: counter files must end in .json or .csv")


def save_counters(records: Iterable[CounterRecord], path: str | os.PathLike) -> None:
    """Write records as JSON or CSV (by extension), atomically.

    Parameters
    ----------
    records : iterable of CounterRecord
    path : path-like
        ``*.json`` or ``*.csv``.
    """
    recs = list(records)
    p = Path(path)
    if p.suffix.lower() == ".json":
        doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "records": [r.to_dict() for r in recs]}
        atomic_write_text(p, json.dumps(doc, indent=2) + "\n")
    elif p.suffix.lower() == ".csv":
        df = pd.DataFrame(
            [{f: (r.name if f == "name" else getattr(r, f)) for f in FIELDS} for r in recs], columns=list(FIELDS)
        )
        atomic_write_text(p, f"# {SCHEMA} schema_version={SCHEMA_VERSION}\n" + df.to_csv(index=False, na_rep=""))
    else:
        raise CounterError(f"{p}: counter files must end in .json or .csv")
