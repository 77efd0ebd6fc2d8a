// A one-process HDFS for the tests: Hadoop's MiniDFSCluster (one NameNode, one DataNode) on 127.0.0.1.
//
// Usage: java -cp <hadoop-client-minicluster + pyspark jars> MiniHdfs <base dir>
// Prints "READY hdfs://127.0.0.1:<port>" on stdout once the cluster is active, then runs until its
// standard input closes (the test fixture closes it to stop the cluster) and shuts the cluster down.
// Every listener (NameNode RPC and HTTP, DataNode data, IPC and HTTP) is bound to 127.0.0.1 on a
// port the system picks. Built at setup by tests/support/servers/hdfs.py.

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

public final class MiniHdfs {
    private MiniHdfs() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: MiniHdfs <base dir>");
            System.exit(2);
        }
        Configuration conf = new Configuration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, args[0]);
        conf.set("dfs.namenode.rpc-address", "127.0.0.1:0");
        conf.set("dfs.namenode.http-address", "127.0.0.1:0");
        conf.set("dfs.datanode.address", "127.0.0.1:0");
        conf.set("dfs.datanode.http.address", "127.0.0.1:0");
        conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
        conf.set("dfs.replication", "1");
        conf.setBoolean("dfs.permissions.enabled", true);
        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf)
                .numDataNodes(1)
                .nameNodePort(0)
                .format(true)
                .checkDataNodeAddrConfig(true)
                .build();
        try {
            cluster.waitActive();
            System.out.println("READY hdfs://127.0.0.1:" + cluster.getNameNodePort());
            System.out.flush();
            while (System.in.read() != -1) {
                // run until stdin closes
            }
        } finally {
            cluster.shutdown(true);
        }
    }
}
