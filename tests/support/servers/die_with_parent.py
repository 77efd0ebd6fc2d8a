"""``python die_with_parent.py PARENT_PID COMMAND...``: exec ``COMMAND``, which Linux SIGKILLs when ``PARENT_PID`` ends.

The test servers (:func:`tests.support.servers.processes.spawn`) start through this: it asks the kernel
(``prctl(PR_SET_PDEATHSIG, SIGKILL)``, kept across ``exec``) to kill this process when the thread that
started it ends, then replaces itself with the server (same process id, same process group). A test run
that is killed (SIGKILL, a CI timeout, a second Ctrl-C) runs no fixture finaliser; without this its
SeaweedFS and MiniDFSCluster servers ran on with nobody to stop them. When ``PARENT_PID`` is already gone
(it ended before the ``prctl``), the server is not started: exit status 1.

Standard library only, run as a script (not ``-m``): the servers' working directory is not the repository.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> int:
    parent, command = int(argv[0]), argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent:
        print(f"die_with_parent: parent {parent} ended before {command[0]} started", file=sys.stderr)
        return 1
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
