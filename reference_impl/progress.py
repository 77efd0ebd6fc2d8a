"""Progress for long work: phases with timings, printed to stderr, recorded for ``--json`` reports."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Progress:
    """Times named phases; prints ``[delta-ckpt] <phase> … <seconds>s`` when ``enabled``."""

    enabled: bool = True
    prefix: str = "delta-ckpt"
    timings: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        if self.enabled:
            print(f"[{self.prefix}] {name} …", file=sys.stderr, flush=True)
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            self.timings[name] = round(self.timings.get(name, 0.0) + elapsed, 3)
            if self.enabled:
                print(f"[{self.prefix}] {name} done in {elapsed:.2f}s", file=sys.stderr, flush=True)

    def note(self, message: str) -> None:
        if self.enabled:
            print(f"[{self.prefix}] {message}", file=sys.stderr, flush=True)


#: A Progress that records timings but prints nothing.
def silent() -> Progress:
    return Progress(enabled=False)
