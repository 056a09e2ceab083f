"""The heap a process builds at start-up (its imported modules, the model client stack, the
database's metadata) lives as long as the process. Python's cyclic garbage collector scans it again
at every full collection: some 300,000 objects, about 0.2 CPU s each time, once every few runs of a
busy executor (bench/overhead.py). ``freeze_startup_heap`` moves what is alive when the executor
first starts into the collector's permanent generation (``gc.freeze``), once per process, so later
collections scan only what runs allocate. Anything frozen that later becomes garbage is freed by
reference counting as before; only a reference cycle made of frozen objects would stay.
"""

from __future__ import annotations

import gc

_frozen = False


def freeze_startup_heap() -> None:
    """Collect once, then freeze what is left (at most once per process)."""
    global _frozen
    if _frozen:
        return
    _frozen = True
    gc.collect()
    gc.freeze()
