"""Which writer features this implementation supports: one table for the writer and the cleaner.

Spec: ``spec/checkpoints.md`` §17 ``CKPT-WRITE-010`` (a writer writes no checkpoint of a version whose
protocol lists a writer feature it does not support) and §18 ``CKPT-CLEAN-011`` (a cleaner deletes
nothing of such a table). PROTOCOL, Table Features: "to write a table, writers must implement and
respect all features listed in ``writerFeatures``".

A feature is *supported* when writing a checkpoint of, or cleaning, a table that lists it needs
nothing this implementation does not do: most features constrain data files or commits, which
neither role writes. Some features are refused on purpose by one role or both (``REFUSED``), with the
reason (``REFUSED_WRITER_FEATURES``); a feature in neither table is unknown and refused by both roles. Reader features are checked
by the reader (:func:`reference_impl.read.snapshot.check_reader_features`), which both roles run first.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from reference_impl.errors import UnsupportedWriterFeature

#: The roles that write to a table and so must implement its writer features.
WritingRole = Literal["writer", "cleaner"]

#: Writer features whose presence changes nothing in how this implementation writes checkpoints and
#: cleans the log, or whose rules it implements. ``checkpointProtection``: the writer checkpoints a
#: version only after checking that version's own protocol (``CKPT-WRITE-010``), and the cleaner
#: removes the protected history whole or not at all (``CKPT-CLEAN-021``,
#: :func:`reference_impl.cleanup.plan.protect_history`).
SUPPORTED_WRITER_FEATURES: frozenset[str] = frozenset(
    {
        "appendOnly",
        "invariants",
        "checkConstraints",
        "changeDataFeed",
        "generatedColumns",
        "columnMapping",
        "identityColumns",
        "deletionVectors",
        "rowTracking",
        "timestampNtz",
        "domainMetadata",
        "v2Checkpoint",
        "icebergCompatV1",
        "icebergCompatV2",
        "icebergCompatV3",
        "icebergWriterCompatV1",
        "icebergWriterCompatV3",
        "clustering",
        "typeWidening",
        "typeWidening-preview",
        "vacuumProtocolCheck",
        "variantType",
        "variantType-preview",
        "variantShredding",
        "variantShredding-preview",
        "inCommitTimestamp",
        "allowColumnDefaults",
        "collations-preview",
        "checkpointProtection",
    }
)


class Refusal(NamedTuple):
    """Why a role refuses a feature it knows."""

    roles: frozenset[WritingRole]
    reason: str
    rule: str | None = None  # the rule a refusing cleaner cites, when more specific than CKPT-CLEAN-011


_CATALOG = Refusal(
    frozenset({"writer", "cleaner"}),
    "the managing catalog decides which maintenance a client may run; this implementation has no catalog",
    "CKPT-CLEAN-019",
)
#: Features refused on purpose, by one role or both.
REFUSED_WRITER_FEATURES: dict[str, Refusal] = {
    "catalogManaged": _CATALOG,
    "catalogOwned-preview": _CATALOG,
    "coordinatedCommits-preview": Refusal(
        frozenset({"writer", "cleaner"}), "unbackfilled commits live outside the published log"
    ),
}
MAX_WRITER_VERSION = 7
_RULE: dict[WritingRole, str] = {"writer": "CKPT-WRITE-010", "cleaner": "CKPT-CLEAN-011"}
_CONSEQUENCE: dict[WritingRole, str] = {"writer": "nothing was written", "cleaner": "nothing was deleted"}


def check_writer_features(protocol: dict[str, Any], path: str, *, role: WritingRole) -> None:
    """Raise ``UNSUPPORTED_WRITER_FEATURE`` for a protocol ``role`` must not write to (module docs)."""
    version = int(protocol.get("minWriterVersion", 1))
    if version > MAX_WRITER_VERSION:
        raise UnsupportedWriterFeature(
            f"minWriterVersion {version} is not supported by the {role}; {_CONSEQUENCE[role]}",
            path=path,
            rule=_RULE[role],
        )
    refused: list[str] = []
    unknown: list[str] = []
    rule = _RULE[role]
    for feature in protocol.get("writerFeatures") or []:
        refusal = REFUSED_WRITER_FEATURES.get(feature)
        if refusal is not None and role in refusal.roles:
            refused.append(f"{feature} ({refusal.reason})")
            if role == "cleaner" and refusal.rule is not None:
                rule = refusal.rule
        elif refusal is None and feature not in SUPPORTED_WRITER_FEATURES:
            unknown.append(f"{feature} (unknown)")
    if refused or unknown:
        raise UnsupportedWriterFeature(
            f"the {role} does not support writer feature(s) {', '.join(refused + unknown)}; {_CONSEQUENCE[role]}",
            path=path,
            rule=rule,
        )
