"""Hostile tables: names, links and hints that try to make a reader or cleaner leave the table (spec D22).

Spec: ``spec/checkpoints.md`` §19.1 Sidecar paths (``CKPT-SIDE-014``, ``-016``, ``-017``), §16.4
(``CKPT-READ-025``), §16.3 (``CKPT-READ-010``), §18.2 (``CKPT-CLEAN-028``, ``-024``).

One table of cases (:data:`HOSTILE_CASES`), one builder (:func:`build_hostile_table`). Every case is
built in its own directory ``ROOT``::

    ROOT/table/                      the hostile table
    ROOT/other/_delta_log/_sidecars/ another table's sidecars: decoys under the names the cases aim at
    ROOT/decoy.txt, ROOT/<name>      decoys beside the table

A **decoy** is a copy of the table's *second* sidecar, placed wherever a hostile path could lead, so a
reader that follows the path reads a valid sidecar of the wrong content and reports a state without
the first sidecar's files; ``sizeInBytes`` is set to the decoy's length, so a size check does not
save it. The builder returns the files outside the table, with their contents, to be asserted after
every run (:meth:`HostileTable.outside_changes`).

| kind | base | what is hostile |
|---|---|---|
| ``sidecar-path`` | ``valid/v2_uuid_json_sidecars`` (UUID-named JSON V2, 2 sidecars at 3), commits before 3 and ``_last_checkpoint`` deleted, the first sidecar removed | the first ``sidecar.path`` |
| ``sidecar-file`` | the same | what is at ``_sidecars/<first name>`` (a link, a directory), or ``_sidecars`` itself |
| ``log-entry`` | ``valid/v2_uuid_json_sidecars`` whole (commits 0..4) | a name in ``_delta_log/``: a link out, a directory |
| ``hint`` | the same | ``_last_checkpoint`` |
| ``cleanup`` | the ``v2-sidecars`` cleanup case (:mod:`conformance.tables.cleanup_cases`) | names and links a cleaner meets |

Outcomes (:class:`Outcome`): the base's state, and/or one of some error codes. Never a state with
a decoy's content, never a change outside the table.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from conformance.decode.names import DELTA_LOG, LAST_CHECKPOINT, SIDECAR_DIR

Kind = Literal["sidecar-path", "sidecar-file", "log-entry", "hint", "cleanup"]

#: The golden table every reader case starts from (relative to ``fixtures/``).
READER_BASE = "valid/v2_uuid_json_sidecars"
CHECKPOINT_VERSION = 3
LATEST = 4

MISSING_OR_INVALID = frozenset({"SIDECAR_MISSING", "SIDECAR_PATH_INVALID"})
UNREADABLE = MISSING_OR_INVALID | {"CHECKPOINT_CORRUPT"}


@dataclass(frozen=True)
class Outcome:
    """What a conforming implementation may answer: the base's state (``state``) or one of ``codes``."""

    state: bool
    codes: frozenset[str] = frozenset()

    def describe(self) -> str:
        parts = ([f"the state of version {LATEST}"] if self.state else []) + sorted(self.codes)
        return " or ".join(parts)


ERROR = Outcome(False, MISSING_OR_INVALID)
ERROR_OR_CORRUPT = Outcome(False, UNREADABLE)
STATE = Outcome(True)


@dataclass(frozen=True)
class HostileCase:
    """One hostile input. ``value`` and ``at`` are templates (:data:`FIELDS`): for ``sidecar-path`` the
    first ``sidecar.path``; for ``hint`` the bytes of ``_last_checkpoint``; otherwise a mutation of the
    entry ``at`` (relative to ``_delta_log``): ``link:<target>``, ``dirlink:<target>`` or ``dir``."""

    name: str
    kind: Kind
    rule: str
    value: str
    outcome: Outcome
    description: str
    at: str = ""


#: Template fields: ``{name}`` the first sidecar's name, ``{second}`` the second's, ``{checkpoint}`` the
#: top-level file, ``{root}`` the case directory, ``{root_uri}`` its ``file://`` URI, ``{root_enc}`` its
#: path with ``/`` encoded, ``{decoy_size}`` a decoy's length.
FIELDS = ("name", "second", "checkpoint", "root", "root_uri", "root_enc", "decoy_size")

_OTHER = "other/_delta_log/_sidecars/{name}"
_ENC = _OTHER.replace("/", "%2F")

#: ``sidecar.path`` values: (name, rule, value, outcome, description). No scheme: CKPT-SIDE-016 (MUST);
#: a scheme: CKPT-SIDE-014.
_SIDECAR_PATHS: list[tuple[str, str, str, Outcome, str]] = [
    ("encoded-traversal-other-table", "CKPT-SIDE-016", "..%2F..%2F..%2F" + _ENC, ERROR, "issue #14's path into another table"),
    ("encoded-traversal-delta-log", "CKPT-SIDE-016", "..%2F{name}", ERROR, "into _delta_log/"),
    ("encoded-traversal-table-root", "CKPT-SIDE-016", "..%2F..%2F{name}", ERROR, "into the table's root"),
    ("encoded-traversal-beside-table", "CKPT-SIDE-016", "..%2F..%2F..%2F{name}", ERROR, "beside the table"),
    ("encoded-dots-and-slashes", "CKPT-SIDE-016", "%2E%2E%2F%2E%2E%2F%2E%2E%2F" + _ENC, ERROR, "the dots encoded too"),
    ("encoded-lower-case", "CKPT-SIDE-016", "%2e%2e%2f%2e%2e%2f%2e%2e%2f" + _ENC.replace("%2F", "%2f"), ERROR, "lower-case escapes"),
    ("encoded-dot-segment-first", "CKPT-SIDE-016", ".%2F..%2F{name}", ERROR, "a '.' segment, then '..'"),
    ("encoded-absolute-path", "CKPT-SIDE-016", "%2F{root_enc}%2F" + _ENC, ERROR, "an absolute path, every '/' encoded"),
    ("double-encoded-traversal", "CKPT-SIDE-016", "..%252F..%252F..%252F" + _ENC.replace("%2F", "%252F"), ERROR, "leaves when decoded twice"),
    ("double-encoded-dots", "CKPT-SIDE-016", "%252E%252E%252F{name}", ERROR, "'../' encoded twice"),
    ("triple-encoded-traversal", "CKPT-SIDE-016", "..%25252F{name}", ERROR, "leaves when decoded three times"),
    ("mixed-encoding-traversal", "CKPT-SIDE-016", "..%2F..%252F..%2F" + _ENC, ERROR, "one level encoded twice"),
    ("backslash-traversal", "CKPT-SIDE-016", "..\\..\\..\\" + _OTHER.replace("/", "\\"), ERROR, "Windows separators"),
    ("backslash-one-level", "CKPT-SIDE-016", "..\\{name}", ERROR, "one Windows '..'"),
    ("encoded-backslash-traversal", "CKPT-SIDE-016", "..%5C..%5C..%5C" + _OTHER.replace("/", "%5C"), ERROR, "%5C separators"),
    ("double-encoded-backslash", "CKPT-SIDE-016", "..%255C{name}", ERROR, "%255C"),
    ("slash-traversal-other-table", "CKPT-SIDE-016", "../../../" + _OTHER, ERROR, "plain '../'"),
    ("slash-traversal-delta-log", "CKPT-SIDE-016", "../{name}", ERROR, "plain '../' into _delta_log/"),
    ("slash-dot-traversal", "CKPT-SIDE-016", "./../{name}", ERROR, "'./../'"),
    ("sidecars-prefix-traversal", "CKPT-SIDE-016", "_sidecars/../../{name}", ERROR, "a directory, then out"),
    ("absolute-path", "CKPT-SIDE-016", "{root}/" + _OTHER, ERROR, "an absolute path without a scheme"),
    ("absolute-path-beside-table", "CKPT-SIDE-016", "{root}/{name}", ERROR, "an absolute path beside the table"),
    ("overlong-utf8-slash", "CKPT-SIDE-016", "..%C0%AF..%C0%AF..%C0%AF" + _ENC.replace("%2F", "%C0%AF"), ERROR, "overlong UTF-8 '/'"),
    ("fullwidth-solidus", "CKPT-SIDE-016", "..%EF%BC%8F{name}", ERROR, "U+FF0F, not a separator"),
    ("nul-byte", "CKPT-SIDE-016", "{name}\x00.txt", ERROR, "a raw NUL byte"),
    ("encoded-nul", "CKPT-SIDE-016", "{name}%00", ERROR, "%00 after the name"),
    ("encoded-nul-only", "CKPT-SIDE-016", "%00", ERROR, "only %00"),
    ("encoded-invalid-utf8", "CKPT-SIDE-016", "%FF%FE{name}", ERROR, "%FF%FE"),
    ("raw-invalid-utf8", "CKPT-SIDE-016", "\udcff\udcfe{name}", ERROR_OR_CORRUPT, "bytes 0xFF 0xFE in the JSON file"),
    ("name-256-bytes", "CKPT-SIDE-016", "a" * 256, ERROR, "one byte over the limit"),
    ("name-300-bytes-after-name", "CKPT-SIDE-016", "{name}" + "a" * 300, ERROR, "the real name, then 300 bytes"),
    ("name-256-bytes-decoded", "CKPT-SIDE-016", "%61" * 256, ERROR, "256 bytes once decoded"),
    ("name-255-bytes", "CKPT-SIDE-016", "a" * 247 + ".parquet", ERROR, "at the limit: a valid name, no such file"),
    ("empty", "CKPT-SIDE-016", "", ERROR, "the _sidecars/ directory itself"),
    ("dot", "CKPT-SIDE-016", ".", ERROR, "the _sidecars/ directory"),
    ("dot-dot", "CKPT-SIDE-016", "..", ERROR, "_delta_log/ itself"),
    ("encoded-dot-dot", "CKPT-SIDE-016", "%2E%2E", ERROR, "_delta_log/ once decoded"),
    ("uri-other-table", "CKPT-SIDE-014", "{root_uri}/" + _OTHER, ERROR, "file:// into another table"),
    ("uri-single-slash", "CKPT-SIDE-014", "file:{root}/" + _OTHER, ERROR, "the file:/ form"),
    ("uri-localhost", "CKPT-SIDE-014", "file://localhost{root}/" + _OTHER, ERROR, "file://localhost"),
    ("uri-other-host", "CKPT-SIDE-014", "file://evil.invalid{root}/" + _OTHER, ERROR, "a host in a file: URI"),
    ("uri-dot-segments", "CKPT-SIDE-014", "{root_uri}/table/_delta_log/_sidecars/../../../" + _OTHER, ERROR, "the own prefix, then '..'"),
    ("uri-encoded-traversal", "CKPT-SIDE-014", "{root_uri}/table/_delta_log/_sidecars/..%2F..%2F..%2F" + _ENC, ERROR, "the own prefix, then an encoded '..'"),
    ("uri-hdfs", "CKPT-SIDE-014", "hdfs://namenode.invalid:8020{root}/table/_delta_log/_sidecars/{name}", ERROR, "another scheme and host"),
    ("uri-s3", "CKPT-SIDE-014", "s3://bucket.invalid/table/_delta_log/_sidecars/{name}", ERROR, "an object store"),
    ("uri-http", "CKPT-SIDE-014", "http://127.0.0.1:9/{name}", ERROR, "http"),
]  # fmt: skip

#: Entries replaced by a link or a directory: (name, kind, rule, at, mutation, outcome, description).
_ENTRIES: list[tuple[str, Kind, str, str, str, Outcome, str]] = [
    ("link-to-other-table", "sidecar-file", "CKPT-SIDE-017", "_sidecars/{name}", "link:{root}/" + _OTHER, ERROR, "the first sidecar: a link into another table"),
    ("link-to-delta-log", "sidecar-file", "CKPT-SIDE-017", "_sidecars/{name}", "link:../{name}", ERROR, "the first sidecar: a relative link to _delta_log/<name>"),
    ("link-to-directory", "sidecar-file", "CKPT-SIDE-017", "_sidecars/{name}", "link:{root}/other", ERROR_OR_CORRUPT, "the first sidecar: a link to a directory"),
    ("dangling-link", "sidecar-file", "CKPT-SIDE-017", "_sidecars/{name}", "link:{root}/nowhere.parquet", ERROR_OR_CORRUPT, "the first sidecar: a link to nothing"),
    ("sidecars-dir-linked-out", "sidecar-file", "CKPT-SIDE-017", "_sidecars", "dirlink:{root}/other/_delta_log/_sidecars", ERROR_OR_CORRUPT, "_sidecars: a link into another table"),
    ("sidecar-is-directory", "sidecar-file", "CKPT-SIDE-016", "_sidecars/{name}", "dir", ERROR_OR_CORRUPT, "the first sidecar: a directory"),
    ("checkpoint-linked-out", "log-entry", "CKPT-READ-025", "{checkpoint}", "link:{root}/decoy-checkpoint.json", STATE, "the top-level file: a link to a copy without the first sidecar"),
    ("checkpoint-is-directory", "log-entry", "CKPT-READ-025", "{checkpoint}", "dir", STATE, "the top-level file: a directory"),
    ("parquet-checkpoint-linked-out", "log-entry", "CKPT-READ-025", "00000000000000000004.checkpoint.parquet", "link:{root}/decoy.parquet", STATE, "a classic checkpoint at 4: a link to a sidecar outside"),
    ("parquet-checkpoint-is-directory", "log-entry", "CKPT-READ-025", "00000000000000000004.checkpoint.parquet", "dir", STATE, "a classic checkpoint at 4: a directory"),
    ("commit-linked-out", "log-entry", "CKPT-READ-025", "00000000000000000005.json", "link:{root}/decoy-commit.json", STATE, "commit 5: a link to a commit outside that removes every file"),
    ("commit-is-directory", "log-entry", "CKPT-READ-025", "00000000000000000005.json", "dir", STATE, "commit 5: a directory"),
    ("hint-linked-out", "log-entry", "CKPT-READ-025", "_last_checkpoint", "link:{root}/decoy-hint.json", STATE, "_last_checkpoint: a link to a hint outside"),
    ("hint-is-directory", "log-entry", "CKPT-READ-025", "_last_checkpoint", "dir", STATE, "_last_checkpoint: a directory"),
]  # fmt: skip

#: ``_last_checkpoint`` contents (CKPT-READ-010: a reader ignores what it cannot use and lists instead).
_V2 = '"v2Checkpoint":{{{{"path":"{path}","sizeInBytes":1,"modificationTime":0}}}}'
_HINTS: list[tuple[str, str]] = [
    ("version-negative", '{{"version":-1,"size":3}}'),
    ("version-huge", '{{"version":9223372036854775807,"size":3}}'),
    ("version-overflow", '{{"version":18446744073709551616,"size":3}}'),
    ("version-string", '{{"version":"3","size":3}}'),
    ("version-fraction", '{{"version":3.5,"size":3}}'),
    ("parts-zero", '{{"version":3,"size":3,"parts":0}}'),
    ("parts-huge", '{{"version":3,"size":3,"parts":2147483647}}'),
    ("v2-path-traversal", '{{"version":3,"size":3,' + _V2.format(path="../../../decoy-checkpoint.json") + "}}"),
    ("v2-path-encoded", '{{"version":3,"size":3,' + _V2.format(path="..%2F..%2F..%2Fdecoy-checkpoint.json") + "}}"),
    ("v2-path-uri", '{{"version":3,"size":3,' + _V2.format(path="{root_uri}/decoy-checkpoint.json") + "}}"),
    ("v2-sidecar-files-traversal", '{{"version":3,"size":3,"v2Checkpoint":{{"path":"{checkpoint}","sizeInBytes":1,'
     '"modificationTime":0,"sidecarFiles":[{{"path":"..%2F..%2F..%2F' + _ENC + '","sizeInBytes":{decoy_size},'
     '"modificationTime":0}},{{"path":"{second}","sizeInBytes":{decoy_size},"modificationTime":0}}]}}}}'),
    ("nul-bytes", '{{"version":3,"size":3}}\x00\x00'),
    ("invalid-utf8", '{{"version":3,"size":3,"tags":{{"x":"\udcff"}}}}'),
    ("deeply-nested", '{{"version":3,"size":3,"tags":' + "[" * 5000 + "]" * 5000 + "}}"),
]  # fmt: skip

#: Cleanup cases: (name, rule, mutation, description). Any result is allowed; nothing outside may change.
_CLEANUP: list[tuple[str, str, str, str]] = [
    ("sidecars-dir-linked-out", "CKPT-CLEAN-024", "dirlink-sidecars", "_sidecars moved out of the table, a link in its place; an old decoy beside the sidecars there"),
    ("expired-commit-linked-out", "CKPT-CLEAN-024", "link:00000000000000000001.json", "expired commit 1: a link to its copy outside"),
    ("expired-checkpoint-linked-out", "CKPT-CLEAN-024", "link:{checkpoint2}", "expired checkpoint 2: a link to its copy outside"),
    ("expired-sidecar-linked-out", "CKPT-CLEAN-024", "link:_sidecars/{sidecar2}", "a sidecar of expired checkpoint 2: a link to its copy outside"),
    ("hint-linked-out", "CKPT-CLEAN-024", "link:_last_checkpoint", "_last_checkpoint: a link to its copy outside"),
    ("expired-sidecar-path-uri", "CKPT-CLEAN-028", "path:{root_uri}/{sidecar2}", "expired checkpoint 2 names a decoy outside by file:// URI"),
    ("expired-sidecar-path-traversal", "CKPT-CLEAN-028", "path:../../../{sidecar2}", "expired checkpoint 2 names a decoy outside by '../'"),
    ("expired-sidecar-path-encoded", "CKPT-CLEAN-028", "path:..%2F..%2F..%2F{sidecar2}", "expired checkpoint 2 names a decoy outside by '..%2F'"),
    ("junk-names", "CKPT-CLEAN-028", "junk", "old files with non-UTF-8 and 255-byte names in _delta_log/ and _sidecars/"),
]  # fmt: skip

ANY = Outcome(True, frozenset({"*"}))
HOSTILE_CASES: tuple[HostileCase, ...] = (
    *(HostileCase(n, "sidecar-path", r, v, o, d) for n, r, v, o, d in _SIDECAR_PATHS),
    *(HostileCase(n, k, r, m, o, d, at=at) for n, k, r, at, m, o, d in _ENTRIES),
    *(
        HostileCase(f"hint-{n}", "hint", "CKPT-READ-010", v, STATE, f"_last_checkpoint: {n}")
        for n, v in _HINTS
    ),
    *(HostileCase(n, "cleanup", r, m, ANY, d) for n, r, m, d in _CLEANUP),
)
READER_CASES: tuple[HostileCase, ...] = tuple(c for c in HOSTILE_CASES if c.kind != "cleanup")
CLEANUP_CASES: tuple[HostileCase, ...] = tuple(c for c in HOSTILE_CASES if c.kind == "cleanup")


# -- building ----------------------------------------------------------------------------------------

Snapshot = dict[str, bytes | str]  # relative path -> content, or "link:<target>" / "dir"


def snapshot(root: Path, *, exclude: Path) -> Snapshot:
    """Every entry under ``root`` but ``exclude`` (the table): file contents, link targets, directories."""
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        for entry in [*dirnames, *filenames]:
            path = here / entry
            if path == exclude:
                continue
            rel = os.fsencode(path.relative_to(root)).decode("utf-8", "backslashreplace")
            if path.is_symlink():
                out[rel] = f"link:{os.readlink(path)}"
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = path.read_bytes()
        dirnames[:] = [d for d in dirnames if here / d != exclude]
    return out


@dataclass
class HostileTable:
    """A built case: the table, and everything outside it as it was after the build."""

    case: HostileCase
    root: Path
    table: Path
    value: str
    outside: Snapshot = field(default_factory=dict)

    @property
    def log_dir(self) -> Path:
        return self.table / DELTA_LOG

    @property
    def label(self) -> str:
        return (
            f"hostile case {self.case.name} ({self.case.description}; {self.value[:120]!r}) at {self.table}"
        )

    def outside_changes(self) -> list[str]:
        """Entries outside the table that are gone, new or different since the build."""
        now = snapshot(self.root, exclude=self.table)
        changed = [f"{k}: gone" for k in self.outside if k not in now]
        changed += [f"{k}: new" for k in now if k not in self.outside]
        changed += [f"{k}: changed" for k in now if k in self.outside and now[k] != self.outside[k]]
        return sorted(changed)


def _json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_lines(path: Path, actions: list[dict[str, Any]], *, keep_mtime: bool = False) -> None:
    """JSON lines; lone surrogates in strings become raw bytes (invalid UTF-8 on purpose)."""
    times = path.stat() if keep_mtime else None
    text = "".join(json.dumps(a, separators=(",", ":"), ensure_ascii=False) + "\n" for a in actions)
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    if times is not None:
        os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def _mutate(spec: str, at: Path) -> None:
    """Replace ``at`` by ``link:<target>``, ``dirlink:<target>`` or ``dir`` (a directory)."""
    action, _, target = spec.partition(":")
    if at.is_dir() and not at.is_symlink():
        shutil.rmtree(at)
    else:
        at.unlink(missing_ok=True)
    if action == "dir":
        at.mkdir()
    elif action in ("link", "dirlink"):
        at.symlink_to(target, target_is_directory=action == "dirlink")
    else:
        raise ValueError(f"unknown mutation {spec!r}")


def build_hostile_table(case: HostileCase, fixtures: Path, root: Path) -> HostileTable:
    """Build reader case ``case`` under ``root`` from ``fixtures/`` (see the module docs)."""
    table = root / "table"
    shutil.copytree(fixtures / READER_BASE / "table", table)
    log_dir = table / DELTA_LOG
    (top,) = [p for p in log_dir.iterdir() if ".checkpoint." in p.name and p.name.endswith(".json")]
    actions = _json_lines(top)
    sidecars = [a["sidecar"] for a in actions if "sidecar" in a]
    first, second = sidecars[0]["path"], sidecars[1]["path"]
    source = log_dir / SIDECAR_DIR / second
    other = root / "other" / DELTA_LOG / SIDECAR_DIR
    other.mkdir(parents=True)
    for place in (
        other / first,
        other / second,
        root / first,
        table / first,
        log_dir / first,
        root / "decoy.parquet",
    ):
        shutil.copyfile(source, place)  # decoys: wherever a hostile path may lead
    (root / "decoy.txt").write_text("a file outside the table: no implementation may touch it\n")
    _write_lines(
        root / "decoy-checkpoint.json", [a for a in actions if a.get("sidecar", {}).get("path") != first]
    )
    removes = [
        {"remove": {"path": a["add"]["path"], "deletionTimestamp": 1, "dataChange": True}}
        for a in _json_lines(log_dir / "00000000000000000000.json")
        if "add" in a
    ]
    _write_lines(root / "decoy-commit.json", [{"commitInfo": {"operation": "DELETE"}}, *removes])
    (root / "decoy-hint.json").write_text('{"version":99,"size":3}')
    values = {
        "name": first,
        "second": second,
        "checkpoint": top.name,
        "root": str(root),
        "root_uri": root.as_uri(),
        "root_enc": str(root).strip("/").replace("/", "%2F"),
        "decoy_size": str(source.stat().st_size),
    }
    value = case.value.format(**values)
    if case.kind in ("sidecar-path", "sidecar-file"):
        # Only the checkpoint can describe version 3, and its first sidecar is not in _sidecars/.
        for path in log_dir.iterdir():
            if path.name == LAST_CHECKPOINT or (path.name.endswith(".json") and path.name < top.name[:20]):
                path.unlink()
        (log_dir / SIDECAR_DIR / first).unlink()
        sidecars[0]["sizeInBytes"] = source.stat().st_size
        if case.kind == "sidecar-path":
            sidecars[0]["path"] = value
        _write_lines(top, actions)
    if case.kind == "hint":
        (log_dir / LAST_CHECKPOINT).write_bytes(value.encode("utf-8", "surrogateescape"))
    elif case.kind in ("sidecar-file", "log-entry"):
        _mutate(value, log_dir / case.at.format(**values))
    return HostileTable(case, root, table, value, snapshot(root, exclude=table))


def build_hostile_cleanup(
    case: HostileCase, base: Path, checkpoint2: str, sidecar2: str, root: Path
) -> HostileTable:
    """Build cleanup case ``case`` under ``root`` from the cleanup table ``base`` (file times kept).

    ``checkpoint2`` is the top-level file of the expired checkpoint at 2, ``sidecar2`` one of its sidecars.
    """
    table = root / "table"
    shutil.copytree(base, table)  # copy2: modification times kept
    log_dir = table / DELTA_LOG
    (root / "decoy.txt").write_text("a file outside the table: no implementation may touch it\n")
    values = {"checkpoint2": checkpoint2, "sidecar2": sidecar2, "root_uri": root.as_uri()}
    value = case.value.format(**values)
    action, _, target = value.partition(":")
    if action == "dirlink-sidecars":
        elsewhere = root / "elsewhere" / SIDECAR_DIR
        elsewhere.parent.mkdir()
        shutil.move(log_dir / SIDECAR_DIR, elsewhere)
        old = (log_dir / checkpoint2).stat().st_mtime_ns
        shutil.copyfile(elsewhere / sidecar2, elsewhere / "decoy-old.parquet")
        os.utime(elsewhere / "decoy-old.parquet", ns=(old, old))
        (log_dir / SIDECAR_DIR).symlink_to(elsewhere, target_is_directory=True)
    elif action == "link":
        outside = root / "outside" / target
        outside.parent.mkdir(parents=True)
        shutil.move(log_dir / target, outside)
        (log_dir / target).symlink_to(outside)
    elif action == "path":
        shutil.copy2(log_dir / SIDECAR_DIR / sidecar2, root / sidecar2)
        top = log_dir / checkpoint2
        actions = _json_lines(top)
        for a in actions:
            if a.get("sidecar", {}).get("path") == sidecar2:
                a["sidecar"]["path"] = target
        _write_lines(top, actions, keep_mtime=True)
    elif action == "junk":
        old = (log_dir / checkpoint2).stat().st_mtime_ns
        for directory in (log_dir, log_dir / SIDECAR_DIR):
            for name in (b"\xff\xfe.json", b"00000000000000000001.json\xff", b"a" * 255):
                path = Path(os.fsdecode(os.path.join(os.fsencode(directory), name)))
                path.write_bytes(b"junk")
                os.utime(path, ns=(old, old))
    else:
        raise ValueError(f"unknown cleanup mutation {value!r}")
    return HostileTable(case, root, table, value, snapshot(root, exclude=table))
