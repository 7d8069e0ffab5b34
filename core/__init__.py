"""Core: the layer every Portcast package may import, and which imports nothing of Portcast.

It holds what all the others share: atomic file output (:mod:`core.atomic`), bounded JSON reading
(:mod:`core.jsonfile`), the version (:mod:`core.version`) and the trace schema, the record layout and the
operation classes that tracers write and every analysis reads (:mod:`core.trace_schema`). Importing the
package imports none of its modules, so ``import portcast`` stays cheap.
"""
