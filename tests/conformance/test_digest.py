"""The digest of a directory (:func:`conformance.decode.files.digest`): the same files, wherever they are.

The cleanup tests read the byte-identical copies that several cleaners leave once per reader
(``conformance/suite/test_cleanup.py``), by this digest: it must tell apart any two trees a reader could
see differently — another byte at the same size and time, another modification time, one file more.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conformance.decode.files import digest


def _table(root: Path) -> Path:
    log = root / "_delta_log"
    (log / "_sidecars").mkdir(parents=True)
    (log / "00000000000000000000.json").write_text('{"commitInfo":{}}\n')
    (log / "_sidecars" / "a.parquet").write_bytes(b"PAR1 sidecar PAR1")
    (root / "part-0.parquet").write_bytes(b"PAR1 data PAR1")
    for n, path in enumerate(sorted(p for p in root.rglob("*") if p.is_file())):
        os.utime(path, ns=(n * 1_000_000_000, n * 1_000_000_000))
    return root


def test_a_copy_elsewhere_has_the_same_digest_and_any_change_another(tmp_path: Path) -> None:
    """A copy with its times kept (``copytree``, as the cleanup tests copy a case) has the original's digest;
    one changed byte (same size, same time), one changed time or one more file each give another."""
    original = _table(tmp_path / "a" / "table")
    copy = tmp_path / "b" / "elsewhere"
    shutil.copytree(original, copy)
    assert digest(copy) == digest(original), f"{copy}: a copy of {original} got another digest"

    commit = copy / "_delta_log" / "00000000000000000000.json"
    times = commit.stat().st_mtime_ns
    commit.write_text('{"commitInfo":{}}\r')  # same size
    os.utime(commit, ns=(times, times))
    assert digest(copy) != digest(original), f"{commit}: another byte, same size and time, same digest"

    shutil.copy2(original / "_delta_log" / commit.name, commit)
    os.utime(copy / "part-0.parquet", ns=(1, 1))
    assert digest(copy) != digest(original), f"{copy / 'part-0.parquet'}: another mtime, same digest"

    shutil.copy2(original / "part-0.parquet", copy / "part-0.parquet")
    assert digest(copy) == digest(original), f"{copy}: restored, yet another digest"
    (copy / "_delta_log" / "_last_checkpoint").write_text("{}")
    assert digest(copy) != digest(original), f"{copy}: one file more, same digest"
