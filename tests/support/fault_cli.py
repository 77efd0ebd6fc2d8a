"""``python -m tests.support.fault_cli DIRECTIVES ARGS…``: the ``delta-ckpt`` command line with fault hooks.

The crash tests run this in a fresh process (its own JVM) so that a ``crash:<point>`` directive
(:mod:`tests.support.faults`) really kills it: ``DIRECTIVES`` is the comma-separated fault plan,
``ARGS`` the usual ``delta-ckpt`` arguments. Run it from the repository root.
"""

from __future__ import annotations

import sys

from reference_impl.cli.main import main
from tests.support.faults import parse_fault_plan


def run(argv: list[str]) -> int:
    """``main`` as the process's own command line (``sys.argv`` without the directives): the same
    temporary root, Ctrl-C handling and exit (:func:`~reference_impl.spark.session.exit_now`) as
    ``delta-ckpt`` — only the hooks differ."""
    directives, *args = argv
    sys.argv = [sys.argv[0], *args]
    return main(hooks=parse_fault_plan(directives))


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
