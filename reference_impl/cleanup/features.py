"""Which writer features a table may list for the cleaner to touch it (``CKPT-CLEAN-011``).

Spec: ``spec/checkpoints.md`` §18 Metadata cleanup, ``CKPT-CLEAN-011``: a cleaner deletes nothing
of a table whose protocol lists a writer feature it does not support. Some features are refused on
purpose: they restrict which files may go, or the files live outside the published log.
"""

from __future__ import annotations

from typing import Any

from reference_impl.errors import UnsupportedWriterFeature

#: Writer features whose presence does not restrict which log files may be deleted.
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
    }
)
#: Features refused on purpose, and why.
REFUSED_WRITER_FEATURES: dict[str, str] = {
    "checkpointProtection": "it restricts which checkpoints and commits may be removed",
    "catalogManaged": "cleanup of a catalog-managed table needs the catalog's permission",
    "catalogOwned-preview": "cleanup of a catalog-managed table needs the catalog's permission",
    "coordinatedCommits-preview": "unbackfilled commits live outside the published log",
}
MAX_WRITER_VERSION = 7


def check_writer_features(protocol: dict[str, Any], path: str) -> None:
    """Raise ``UNSUPPORTED_WRITER_FEATURE`` for a protocol this cleaner must not clean (``CKPT-CLEAN-011``)."""
    version = int(protocol.get("minWriterVersion", 1))
    if version > MAX_WRITER_VERSION:
        raise UnsupportedWriterFeature(
            f"minWriterVersion {version} is not supported by the cleaner; nothing was deleted",
            path=path,
            rule="CKPT-CLEAN-011",
        )
    features = protocol.get("writerFeatures") or []
    refused = [f for f in features if f in REFUSED_WRITER_FEATURES]
    unknown = [f for f in features if f not in SUPPORTED_WRITER_FEATURES and f not in REFUSED_WRITER_FEATURES]
    if refused or unknown:
        parts = [f"{f} ({REFUSED_WRITER_FEATURES[f]})" for f in refused] + [f"{f} (unknown)" for f in unknown]
        raise UnsupportedWriterFeature(
            f"the cleaner does not support writer feature(s) {', '.join(parts)}; nothing was deleted",
            path=path,
            rule="CKPT-CLEAN-011",
        )
