// A one-process HDFS for the tests: Hadoop's MiniDFSCluster (one NameNode, one DataNode) on 127.0.0.1.
//
// Usage: java -cp <hadoop-client-minicluster + pyspark jars> MiniHdfs <base dir>
// Prints "READY hdfs://127.0.0.1:<port>" on stdout once the cluster is active, then reads commands
// from its standard input, one a line, until it closes (the test fixture closes it to stop the
// cluster) and shuts the cluster down:
//   HOLD <bytes> <regex>  hold every block write to a file whose path matches <regex> (Java regex,
//                         find) once <bytes> of the block are on the DataNode's disk: the DataNode
//                         stops receiving that block and prints "HELD <path> <bytes on disk>"
//   RELEASE               let every held write go on, hold nothing more
//   STOP_DATANODES        shut every DataNode down (the NameNode keeps running: listings and
//                         metadata still answer, every read of a block fails) and print
//                         "DATANODES STOPPED"
// Every listener (NameNode RPC and HTTP, DataNode data, IPC and HTTP) is bound to 127.0.0.1 on a
// port the system picks. Built at setup by tests/support/servers/hdfs.py.
//
// The cluster runs as the user "hdfs", so that HDFS's superuser (the NameNode's user, whom no
// permission check applies to) is not the tests' user: a directory the tests make read-only is
// read-only to them. The root directory is open to everyone (mode 777).
//
// The hold is Hadoop's own test hook, DataNodeFaultInjector (in hadoop-client-minicluster):
// BlockReceiver.receivePacket calls delayWriteToDisk() once per data packet, on the thread that
// receives the block, right after it wrote the packet's bytes to the replica file and before it
// flushes them and acknowledges the packet (Hadoop 3.5.0 BlockReceiver.java L760 write, L763
// hook, L845 flush, L863 acknowledgement). That thread is named after the block
// ("... Receiving block BP-...:blk_<id>_<generation stamp>", DataXceiver.writeBlock); the
// NameNode, in this process too, maps the block to its file.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.security.PrivilegedExceptionAction;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockInfo;
import org.apache.hadoop.hdfs.server.datanode.DataNodeFaultInjector;
import org.apache.hadoop.hdfs.server.namenode.FSNamesystem;
import org.apache.hadoop.hdfs.server.namenode.INodeFile;
import org.apache.hadoop.security.UserGroupInformation;

public final class MiniHdfs {
    private MiniHdfs() {}

    /** Holds block writes to matching files (see HOLD above) until released. */
    static final class HoldWrites extends DataNodeFaultInjector {
        private static final Pattern BLOCK = Pattern.compile("(BP-[^:\\s]+):blk_(\\d+)_(\\d+)");
        private final MiniDFSCluster cluster;
        private final Set<Long> held = new HashSet<>();
        private Pattern paths;
        private long afterBytes;
        private long generation;

        HoldWrites(MiniDFSCluster cluster) {
            this.cluster = cluster;
        }

        synchronized void hold(long bytes, Pattern pattern) {
            paths = pattern;
            afterBytes = bytes;
            generation++;
        }

        synchronized void release() {
            paths = null;
            generation++;
            notifyAll();
        }

        @Override
        public void delayWriteToDisk() {
            Pattern pattern;
            long bytes;
            long armed;
            synchronized (this) {
                if (paths == null) {
                    return;
                }
                pattern = paths;
                bytes = afterBytes;
                armed = generation;
            }
            Matcher name = BLOCK.matcher(Thread.currentThread().getName());
            if (!name.find()) {
                return;
            }
            ExtendedBlock block = new ExtendedBlock(
                    name.group(1), Long.parseLong(name.group(2)), 0, Long.parseLong(name.group(3)));
            String path = pathOf(block);
            long onDisk;
            try {
                onDisk = cluster.getDataNodes().get(0).getFSDataset().getLength(block);
            } catch (IOException e) {
                return;
            }
            if (path == null || !pattern.matcher(path).find() || onDisk < bytes) {
                return;
            }
            synchronized (this) {
                if (generation != armed || !held.add(block.getBlockId())) {
                    return;
                }
                System.out.println("HELD " + path + " " + onDisk);
                System.out.flush();
                while (generation == armed) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt(); // the DataNode is stopping
                        return;
                    }
                }
            }
        }

        private String pathOf(ExtendedBlock block) {
            FSNamesystem namesystem = cluster.getNamesystem();
            BlockInfo stored = namesystem.getBlockManager().getStoredBlock(block.getLocalBlock());
            if (stored == null) {
                return null;
            }
            INodeFile file = namesystem.getBlockCollection(stored.getBlockCollectionId());
            return file == null ? null : file.getFullPathName();
        }
    }

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
        MiniDFSCluster cluster = UserGroupInformation.createRemoteUser("hdfs").doAs(
                (PrivilegedExceptionAction<MiniDFSCluster>) () -> new MiniDFSCluster.Builder(conf)
                        .numDataNodes(1)
                        .nameNodePort(0)
                        .format(true)
                        .checkDataNodeAddrConfig(true)
                        .build());
        HoldWrites holds = new HoldWrites(cluster);
        try {
            UserGroupInformation.createRemoteUser("hdfs").doAs((PrivilegedExceptionAction<Boolean>) () -> {
                cluster.waitActive(); // asks the NameNode for a DataNode report: the superuser's
                cluster.getFileSystem().setPermission(new Path("/"), new FsPermission((short) 0777));
                return true;
            });
            DataNodeFaultInjector.set(holds);
            System.out.println("READY hdfs://127.0.0.1:" + cluster.getNameNodePort());
            System.out.flush();
            BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = commands.readLine(); line != null; line = commands.readLine()) {
                String[] words = line.trim().split(" ", 3);
                if (words[0].equals("HOLD") && words.length == 3) {
                    holds.hold(Long.parseLong(words[1]), Pattern.compile(words[2]));
                } else if (words[0].equals("RELEASE")) {
                    holds.release();
                } else if (words[0].equals("STOP_DATANODES")) {
                    holds.release();
                    cluster.shutdownDataNodes();
                    System.out.println("DATANODES STOPPED");
                    System.out.flush();
                } else {
                    System.err.println("MiniHdfs: unknown command " + line);
                }
            }
        } finally {
            holds.release();
            cluster.shutdown(true);
        }
    }
}
