/*
 * Delta Kernel Java behind the delta-checkpoint-conformance subprocess protocol (1.0).
 *
 * The suite starts this program once and writes one JSON request per line on stdin; the program
 * answers each with exactly one JSON line on stdout, in order (conformance/README.md, "In any
 * language: the subprocess protocol"; spec/schemas/harness/{request,response}.schema.json).
 * Diagnostics (Kernel's and Hadoop's logs included) go to stderr: stdout is reserved for responses.
 *
 *   hello             who we are: roles, unavailable TableState fields, writer profiles
 *   read              Kernel's Snapshot + Scan of a version -> raw actions (the suite normalises them)
 *   write_checkpoint  Snapshot.writeCheckpoint: Kernel's (only) checkpoint writer, classic V1
 *   cleanup           Kernel's metadata cleanup (MetadataCleanup.cleanupExpiredLogs) with the suite's clock
 *   shutdown          answer, then exit
 *
 * Built and started by conformance/adapters/kernel_java.py (javac against the Kernel jars of the
 * project's delta-spark pin and pyspark's Hadoop/Parquet/Jackson jars; nothing is downloaded).
 *
 * What comes from where (details and caveats in conformance/examples/kernel_java/README.md):
 *   protocol, metadata   Snapshot.getProtocol() / getMetadata()                        (public API)
 *   files                Scan.getScanFiles(engine, includeStats=true): the live add actions (public API)
 *   domainMetadata       SnapshotImpl.getActiveDomainMetadataMap()                     (internal class)
 *   txns, tombstones     CreateCheckpointIterator: the replay Kernel's checkpoint writer uses (internal)
 *   rows                 Scan.transformPhysicalData over each file: rows left after deletion vectors
 *   checkpoint           LogSegment.getCheckpoints(): the checkpoint the snapshot was built from
 */
package conformance.kernel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.delta.kernel.Scan;
import io.delta.kernel.Snapshot;
import io.delta.kernel.SnapshotBuilder;
import io.delta.kernel.TableManager;
import io.delta.kernel.data.ArrayValue;
import io.delta.kernel.data.ColumnVector;
import io.delta.kernel.data.ColumnarBatch;
import io.delta.kernel.data.FilteredColumnarBatch;
import io.delta.kernel.data.MapValue;
import io.delta.kernel.data.Row;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;
import io.delta.kernel.engine.FileReadResult;
import io.delta.kernel.exceptions.CheckpointAlreadyExistsException;
import io.delta.kernel.exceptions.InvalidTableException;
import io.delta.kernel.exceptions.TableNotFoundException;
import io.delta.kernel.exceptions.UnsupportedProtocolVersionException;
import io.delta.kernel.exceptions.UnsupportedTableFeatureException;
import io.delta.kernel.internal.InternalScanFileUtils;
import io.delta.kernel.internal.SnapshotImpl;
import io.delta.kernel.internal.TableConfig;
import io.delta.kernel.internal.actions.DomainMetadata;
import io.delta.kernel.internal.actions.Format;
import io.delta.kernel.internal.actions.Metadata;
import io.delta.kernel.internal.actions.Protocol;
import io.delta.kernel.internal.data.ScanStateRow;
import io.delta.kernel.internal.fs.Path;
import io.delta.kernel.internal.replay.CreateCheckpointIterator;
import io.delta.kernel.internal.snapshot.LogSegment;
import io.delta.kernel.internal.snapshot.MetadataCleanup;
import io.delta.kernel.internal.tablefeatures.TableFeatures;
import io.delta.kernel.internal.util.Clock;
import io.delta.kernel.internal.util.Utils;
import io.delta.kernel.internal.util.VectorUtils;
import io.delta.kernel.types.ArrayType;
import io.delta.kernel.types.BinaryType;
import io.delta.kernel.types.BooleanType;
import io.delta.kernel.types.ByteType;
import io.delta.kernel.types.DataType;
import io.delta.kernel.types.DateType;
import io.delta.kernel.types.DecimalType;
import io.delta.kernel.types.DoubleType;
import io.delta.kernel.types.FloatType;
import io.delta.kernel.types.IntegerType;
import io.delta.kernel.types.LongType;
import io.delta.kernel.types.MapType;
import io.delta.kernel.types.ShortType;
import io.delta.kernel.types.StringType;
import io.delta.kernel.types.StructField;
import io.delta.kernel.types.StructType;
import io.delta.kernel.types.TimestampNTZType;
import io.delta.kernel.types.TimestampType;
import io.delta.kernel.utils.CloseableIterator;
import io.delta.kernel.utils.FileStatus;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.apache.hadoop.conf.Configuration;

public final class Harness {

  static final String PROTOCOL_VERSION = "1.0";
  static final String NAME = "kernel-java";
  /** The Kernel version: recorded at build time, else from Kernel's jar manifest. */
  static final String KERNEL_VERSION = kernelVersion();

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private final ObjectMapper mapper = new ObjectMapper();
  private final Engine engine;
  /**
   * --tombstones: report tombstones from Kernel's checkpoint replay (CreateCheckpointIterator).
   * Off by default: that replay drops the remove actions that come from a checkpoint, so the
   * tombstones are incomplete whenever the snapshot starts from a checkpoint (README.md).
   */
  private final boolean reportTombstones;

  Harness(Engine engine, boolean reportTombstones) {
    this.engine = engine;
    this.reportTombstones = reportTombstones;
  }

  // ----------------------------------------------------------------------------------------------
  // The request loop
  // ----------------------------------------------------------------------------------------------

  public static void main(String[] args) throws IOException {
    // Responses go to the real stdout; anything a library prints to System.out goes to stderr.
    PrintStream responses =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    // Kernel logs through slf4j. On pyspark's classpath that is log4j2, whose default console
    // appender writes to System.out as it is now (stderr, above), at level ERROR; with
    // slf4j-simple instead, these properties keep it at error level on stderr as well.
    System.setProperty(
        "org.slf4j.simpleLogger.defaultLogLevel",
        System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "error"));
    System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");

    long t0 = System.nanoTime();
    boolean tombstones = false;
    for (String arg : args) {
      if (arg.equals("--tombstones")) {
        tombstones = true;
      } else {
        System.err.println("usage: conformance.kernel.Harness [--tombstones]");
        System.exit(2);
      }
    }
    Harness harness = new Harness(DefaultEngine.create(new Configuration()), tombstones);
    debug("engine created in %d ms", (System.nanoTime() - t0) / 1_000_000);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      JsonNode request;
      try {
        request = harness.mapper.readTree(line);
      } catch (IOException e) {
        System.err.println("[kernel-harness] request is not JSON: " + line);
        continue; // nothing to answer: the request has no id we could echo
      }
      long t = System.nanoTime();
      responses.println(harness.mapper.writeValueAsString(harness.handle(request)));
      debug("%s answered in %d ms", request.path("op").asText(), (System.nanoTime() - t) / 1_000_000);
      if ("shutdown".equals(request.path("op").asText())) {
        break;
      }
    }
    responses.flush();
  }

  private static final boolean DEBUG = System.getenv("KERNEL_HARNESS_DEBUG") != null;

  /** Timing diagnostics on stderr when KERNEL_HARNESS_DEBUG is set. */
  static void debug(String format, Object... args) {
    if (DEBUG) {
      System.err.printf("[kernel-harness] " + format + "%n", args);
    }
  }

  /** One request in, one response out (never throws). */
  ObjectNode handle(JsonNode request) {
    ObjectNode response = NODES.objectNode();
    response.put("id", request.path("id").asLong());
    String op = request.path("op").asText("");
    try {
      switch (op) {
        case "hello":
          response.put("ok", true).set("result", hello());
          break;
        case "read":
          response
              .put("ok", true)
              .set(
                  "result",
                  read(
                      request.path("table").asText(),
                      optLong(request, "version"),
                      optLong(request, "nowMs")));
          break;
        case "write_checkpoint":
          writeCheckpoint(
              request.path("table").asText(),
              request.path("profile").asText(),
              optLong(request, "version"));
          response.put("ok", true).set("result", NODES.objectNode());
          break;
        case "cleanup":
          cleanup(request.path("table").asText(), optLong(request, "nowMs"));
          response.put("ok", true).set("result", NODES.objectNode());
          break;
        case "shutdown":
          response.put("ok", true).set("result", NODES.objectNode());
          break;
        default:
          fail(response, "INVALID_OPTION", "unknown op " + op);
      }
    } catch (CodedError e) {
      fail(response, e.code, e.getMessage());
    } catch (Throwable t) {
      String code = classify(t, op);
      if (code.equals("INTERNAL_ERROR")) { // unexpected: the whole trace, for the bug report
        StringWriter trace = new StringWriter();
        t.printStackTrace(new PrintWriter(trace));
        System.err.println("[kernel-harness] " + op + " failed: " + trace);
      } else {
        System.err.println("[kernel-harness] " + op + " -> " + code + ": " + describe(t));
      }
      fail(response, code, describe(t));
    }
    return response;
  }

  private static ObjectNode fail(ObjectNode response, String code, String message) {
    response.put("ok", false);
    response.remove("result");
    ObjectNode error = response.putObject("error");
    error.put("code", code);
    error.put("message", message == null ? "" : message);
    return response;
  }

  private static Long optLong(JsonNode request, String field) {
    JsonNode n = request.get(field);
    return n == null || n.isNull() ? null : n.asLong();
  }

  private static String kernelVersion() {
    try (java.io.InputStream in = Harness.class.getResourceAsStream("/kernel-harness.properties")) {
      if (in != null) {
        java.util.Properties props = new java.util.Properties();
        props.load(in);
        String v = props.getProperty("kernel.version", "");
        if (!v.isEmpty() && !v.startsWith("${")) {
          return v;
        }
      }
    } catch (IOException e) {
      // fall through to the manifest
    }
    return Optional.ofNullable(Snapshot.class.getPackage().getSpecificationVersion()).orElse("unknown");
  }

  // ----------------------------------------------------------------------------------------------
  // hello
  // ----------------------------------------------------------------------------------------------

  ObjectNode hello() {
    ObjectNode r = NODES.objectNode();
    r.put("name", NAME);
    r.put("version", KERNEL_VERSION);
    r.put("protocolVersion", PROTOCOL_VERSION);
    r.putArray("roles").add("reader").add("writer").add("cleaner");
    r.put(
        "description",
        "Delta Kernel Java "
            + KERNEL_VERSION
            + " (delta-kernel-api + delta-kernel-defaults) through the subprocess protocol");
    r.put("homepage", "https://github.com/delta-io/delta/tree/master/kernel");
    // Kernel's AddFile read schema has no clusteringProvider; Kernel has no reader API for
    // tombstones (see reportTombstones). See README.md.
    ArrayNode unavailable = r.putArray("unavailableFields").add("files.clusteringProvider");
    if (!reportTombstones) {
      unavailable.add("tombstones");
    }
    r.put("reportsCheckpoint", true);
    r.put("honoursClock", true);
    r.put("readsData", true);
    ArrayNode profiles = r.putArray("profiles");
    profiles.add(
        profile(
            "classic",
            "Snapshot.writeCheckpoint on a table without v2Checkpoint: one classic V1 file",
            false));
    profiles.add(
        profile(
            "classic-on-v2",
            "Snapshot.writeCheckpoint on a v2Checkpoint table: still one classic V1 file "
                + "(Kernel writes no V2, UUID-named or multi-part checkpoints)",
            true));
    return r;
  }

  private static ObjectNode profile(String name, String description, boolean needsV2Table) {
    ObjectNode p = NODES.objectNode();
    p.put("name", name);
    p.put("description", description);
    p.put("spec", "v1");
    p.put("naming", "classic");
    p.putNull("manifest");
    p.put("sidecars", false);
    p.put("needsV2Table", needsV2Table);
    p.put("writesLastCheckpoint", true);
    return p;
  }

  // ----------------------------------------------------------------------------------------------
  // read
  // ----------------------------------------------------------------------------------------------

  ObjectNode read(String table, Long version, Long nowMs) throws IOException {
    requireTable(table);
    long t0 = System.nanoTime();
    Snapshot snapshot = loadSnapshot(table, version);
    debug("  snapshot %d ms", (System.nanoTime() - t0) / 1_000_000);

    ObjectNode state = NODES.objectNode();
    state.put("version", snapshot.getVersion());
    state.set("protocol", protocolJson(snapshot.getProtocol()));
    state.set("metadata", metadataJson(snapshot.getMetadata()));

    // Live files through the public Scan API (with stats): exactly what a Kernel-based engine scans.
    Scan scan = snapshot.getScanBuilder().build();
    ArrayNode files = state.putArray("files");
    List<Row> scanFiles = new ArrayList<>();
    try (CloseableIterator<FilteredColumnarBatch> batches = scan.getScanFiles(engine, true)) {
      while (batches.hasNext()) {
        try (CloseableIterator<Row> rows = batches.next().getRows()) {
          while (rows.hasNext()) {
            Row scanFile = rows.next();
            scanFiles.add(scanFile);
            Row add = scanFile.getStruct(InternalScanFileUtils.ADD_FILE_ORDINAL);
            files.add(dropNulls(rowToJson(add)));
          }
        }
      }
    }

    debug("  scan files %d ms", (System.nanoTime() - t0) / 1_000_000);
    // Tombstones and txns: Kernel has no public API listing them (only
    // Snapshot.getLatestTransactionVersion(appId) for a known appId). Its checkpoint writer's
    // replay (CreateCheckpointIterator) is the only place that computes both.
    long now = nowMs != null ? nowMs : System.currentTimeMillis();
    long minRetention = now - TableConfig.TOMBSTONE_RETENTION.fromMetadata(snapshot.getMetadata());
    ArrayNode tombstones = NODES.arrayNode();
    ArrayNode txns = state.putArray("txns");
    try (CreateCheckpointIterator it =
        new CreateCheckpointIterator(engine, snapshot.getLogSegment(), minRetention)) {
      while (it.hasNext()) {
        FilteredColumnarBatch batch = it.next();
        StructType schema = batch.getData().getSchema();
        int removeOrdinal = schema.indexOf("remove");
        int txnOrdinal = schema.indexOf("txn");
        try (CloseableIterator<Row> rows = batch.getRows()) {
          while (rows.hasNext()) {
            Row row = rows.next();
            if (!row.isNullAt(removeOrdinal) && reportTombstones) {
              tombstones.add(dropNulls(rowToJson(row.getStruct(removeOrdinal))));
            } else if (!row.isNullAt(txnOrdinal)) {
              txns.add(dropNulls(rowToJson(row.getStruct(txnOrdinal))));
            }
          }
        }
      }
    }

    if (reportTombstones) {
      state.set("tombstones", tombstones);
    }

    ArrayNode domains = state.putArray("domainMetadata");
    Map<String, DomainMetadata> active =
        new TreeMap<>(((SnapshotImpl) snapshot).getActiveDomainMetadataMap());
    for (DomainMetadata dm : active.values()) {
      domains.addObject().put("domain", dm.getDomain()).put("configuration", dm.getConfiguration());
    }

    debug("  txns, tombstones, domains %d ms", (System.nanoTime() - t0) / 1_000_000);
    ObjectNode result = NODES.objectNode();
    result.set("state", state);
    Long rows = countRows(scan, scanFiles);
    debug("  rows %d ms", (System.nanoTime() - t0) / 1_000_000);
    if (rows == null) {
      result.putNull("rows");
    } else {
      result.put("rows", rows);
    }
    String checkpoint = checkpointUsed(snapshot.getLogSegment());
    if (checkpoint == null) {
      result.putNull("checkpoint");
    } else {
      result.put("checkpoint", checkpoint);
    }
    return result;
  }

  private Snapshot loadSnapshot(String table, Long version) {
    SnapshotBuilder builder = TableManager.loadSnapshot(table);
    if (version != null) {
      builder = builder.atVersion(version);
    }
    return builder.build(engine);
  }

  /** Kernel reports a missing directory in several ways; the spec has one code for it. */
  private static void requireTable(String table) {
    if (!Files.isDirectory(Paths.get(table, "_delta_log"))) {
      throw new CodedError("TABLE_NOT_FOUND", "no _delta_log directory in " + table);
    }
  }

  private static ObjectNode protocolJson(Protocol protocol) {
    ObjectNode p = NODES.objectNode();
    p.put("minReaderVersion", protocol.getMinReaderVersion());
    p.put("minWriterVersion", protocol.getMinWriterVersion());
    // Kernel keeps no difference between an absent feature list and an empty one: a protocol
    // that supports feature lists (reader >= 3, writer >= 7) gets one, the others none.
    if (protocol.supportsReaderFeatures()) {
      ArrayNode a = p.putArray("readerFeatures");
      new TreeSet<>(protocol.getReaderFeatures()).forEach(a::add);
    }
    if (protocol.supportsWriterFeatures()) {
      ArrayNode a = p.putArray("writerFeatures");
      new TreeSet<>(protocol.getWriterFeatures()).forEach(a::add);
    }
    return p;
  }

  private static ObjectNode metadataJson(Metadata metadata) {
    ObjectNode m = NODES.objectNode();
    m.put("id", metadata.getId());
    metadata.getName().ifPresent(n -> m.put("name", n));
    metadata.getDescription().ifPresent(d -> m.put("description", d));
    Format format = metadata.getFormat();
    ObjectNode f = m.putObject("format");
    f.put("provider", format.getProvider());
    ObjectNode options = f.putObject("options");
    new TreeMap<>(format.getOptions()).forEach(options::put);
    m.put("schemaString", metadata.getSchemaString());
    ArrayNode partitionColumns = m.putArray("partitionColumns");
    VectorUtils.<String>toJavaList(metadata.getPartitionColumns()).forEach(partitionColumns::add);
    ObjectNode conf = m.putObject("configuration");
    new TreeMap<>(metadata.getConfiguration()).forEach(conf::put);
    metadata.getCreatedTime().ifPresent(t -> m.put("createdTime", t));
    return m;
  }

  /**
   * Rows visible in the snapshot: every scan file read with Kernel's Parquet reader and passed
   * through Scan.transformPhysicalData, which applies deletion vectors. null when the data files
   * cannot be read (the suite's synthetic shapes reference data files that do not exist).
   */
  private Long countRows(Scan scan, List<Row> scanFiles) {
    try {
      Row scanState = scan.getScanState(engine);
      StructType physicalSchema = ScanStateRow.getPhysicalDataReadSchema(scanState);
      long total = 0;
      for (Row scanFile : scanFiles) {
        FileStatus status = InternalScanFileUtils.getAddFileStatus(scanFile);
        CloseableIterator<ColumnarBatch> physical =
            engine
                .getParquetHandler()
                .readParquetFiles(
                    Utils.singletonCloseableIterator(status), physicalSchema, Optional.empty())
                .map(FileReadResult::getData);
        try (CloseableIterator<FilteredColumnarBatch> logical =
            Scan.transformPhysicalData(engine, scanState, scanFile, physical)) {
          while (logical.hasNext()) {
            FilteredColumnarBatch batch = logical.next();
            int size = batch.getData().getSize();
            Optional<ColumnVector> selection = batch.getSelectionVector();
            if (selection.isEmpty()) {
              total += size;
            } else {
              ColumnVector sv = selection.get();
              for (int i = 0; i < size; i++) {
                if (!sv.isNullAt(i) && sv.getBoolean(i)) {
                  total++;
                }
              }
            }
          }
        }
      }
      return total;
    } catch (Exception e) {
      System.err.println("[kernel-harness] rows not counted: " + describe(e));
      return null;
    }
  }

  /** The top-level file (first part) of the checkpoint the log segment starts from, or null. */
  private static String checkpointUsed(LogSegment segment) {
    TreeSet<String> names = new TreeSet<>();
    for (FileStatus f : segment.getCheckpoints()) {
      names.add(new Path(f.getPath()).getName());
    }
    return names.isEmpty() ? null : names.first();
  }

  // ----------------------------------------------------------------------------------------------
  // write_checkpoint
  // ----------------------------------------------------------------------------------------------

  void writeCheckpoint(String table, String profile, Long version) throws IOException {
    if (!profile.equals("classic") && !profile.equals("classic-on-v2")) {
      throw new CodedError("INVALID_OPTION", "no writer profile " + profile);
    }
    requireTable(table);
    // Always build the snapshot *at a version*, even for the latest: Kernel runs its metadata
    // cleanup after a checkpoint of a snapshot built as "latest" (delta.enableExpiredLogCleanup),
    // and the suite requires the writer to leave existing files alone.
    long v = version != null ? version : loadSnapshot(table, null).getVersion();
    Snapshot snapshot = loadSnapshot(table, v);
    try {
      snapshot.writeCheckpoint(engine);
    } catch (CheckpointAlreadyExistsException e) {
      throw new CodedError("INVALID_OPTION", "Kernel refuses to overwrite: " + e.getMessage());
    }
  }

  // ----------------------------------------------------------------------------------------------
  // cleanup
  // ----------------------------------------------------------------------------------------------

  void cleanup(String table, Long nowMs) throws IOException {
    requireTable(table);
    Snapshot latest = loadSnapshot(table, null);
    Protocol protocol = latest.getProtocol();
    Metadata metadata = latest.getMetadata();
    // Kernel cleans up only after a checkpoint, which first checks that it can write the table.
    try {
      TableFeatures.validateKernelCanWriteToTable(protocol, metadata, table);
    } catch (UnsupportedTableFeatureException | UnsupportedProtocolVersionException e) {
      throw new CodedError("UNSUPPORTED_WRITER_FEATURE", describe(e));
    }
    // Kernel's own gates: delta.enableExpiredLogCleanup, and no cleanup under checkpointProtection.
    if (!TableConfig.EXPIRED_LOG_CLEANUP_ENABLED.fromMetadata(metadata)
        || protocol.getWriterFeatures().contains("checkpointProtection")) {
      System.err.println("[kernel-harness] cleanup disabled for " + table + " (Kernel's gates)");
      return;
    }
    Clock clock = nowMs != null ? () -> nowMs : System::currentTimeMillis;
    long deleted =
        MetadataCleanup.cleanupExpiredLogs(
            engine, clock, new Path(table), TableConfig.LOG_RETENTION.fromMetadata(metadata));
    System.err.println("[kernel-harness] cleanup of " + table + " deleted " + deleted + " files");
  }

  // ----------------------------------------------------------------------------------------------
  // Kernel rows -> JSON
  // ----------------------------------------------------------------------------------------------

  /** A Kernel struct row as a JSON object, field by field through its schema. */
  static ObjectNode rowToJson(Row row) {
    ObjectNode o = NODES.objectNode();
    StructType schema = row.getSchema();
    for (int i = 0; i < schema.length(); i++) {
      StructField field = schema.at(i);
      o.set(field.getName(), row.isNullAt(i) ? NODES.nullNode() : rowValue(row, i, field.getDataType()));
    }
    return o;
  }

  private static JsonNode rowValue(Row row, int i, DataType type) {
    if (type instanceof StringType) return NODES.textNode(row.getString(i));
    if (type instanceof LongType) return NODES.numberNode(row.getLong(i));
    if (type instanceof IntegerType) return NODES.numberNode(row.getInt(i));
    if (type instanceof ShortType) return NODES.numberNode(row.getShort(i));
    if (type instanceof ByteType) return NODES.numberNode(row.getByte(i));
    if (type instanceof BooleanType) return NODES.booleanNode(row.getBoolean(i));
    if (type instanceof DoubleType) return NODES.numberNode(row.getDouble(i));
    if (type instanceof FloatType) return NODES.numberNode(row.getFloat(i));
    if (type instanceof DecimalType) return NODES.numberNode(row.getDecimal(i));
    if (type instanceof DateType) return NODES.numberNode(row.getInt(i));
    if (type instanceof TimestampType || type instanceof TimestampNTZType) {
      return NODES.numberNode(row.getLong(i));
    }
    if (type instanceof BinaryType) {
      return NODES.textNode(Base64.getEncoder().encodeToString(row.getBinary(i)));
    }
    if (type instanceof StructType) return rowToJson(row.getStruct(i));
    if (type instanceof MapType) return mapToJson(row.getMap(i), (MapType) type);
    if (type instanceof ArrayType) return arrayToJson(row.getArray(i), (ArrayType) type);
    throw new IllegalStateException("unsupported type in an action: " + type);
  }

  private static JsonNode vectorValue(ColumnVector v, int i, DataType type) {
    if (v.isNullAt(i)) return NODES.nullNode();
    if (type instanceof StringType) return NODES.textNode(v.getString(i));
    if (type instanceof LongType) return NODES.numberNode(v.getLong(i));
    if (type instanceof IntegerType) return NODES.numberNode(v.getInt(i));
    if (type instanceof BooleanType) return NODES.booleanNode(v.getBoolean(i));
    if (type instanceof DoubleType) return NODES.numberNode(v.getDouble(i));
    if (type instanceof MapType) return mapToJson(v.getMap(i), (MapType) type);
    if (type instanceof ArrayType) return arrayToJson(v.getArray(i), (ArrayType) type);
    throw new IllegalStateException("unsupported element type in an action: " + type);
  }

  private static ObjectNode mapToJson(MapValue map, MapType type) {
    ObjectNode o = NODES.objectNode();
    ColumnVector keys = map.getKeys();
    ColumnVector values = map.getValues();
    for (int i = 0; i < map.getSize(); i++) {
      o.set(keys.getString(i), vectorValue(values, i, type.getValueType()));
    }
    return o;
  }

  private static ArrayNode arrayToJson(ArrayValue array, ArrayType type) {
    ArrayNode a = NODES.arrayNode();
    ColumnVector elements = array.getElements();
    for (int i = 0; i < array.getSize(); i++) {
      a.add(vectorValue(elements, i, type.getElementType()));
    }
    return a;
  }

  /** Drop null fields at the top level and in nested objects (map values keep their nulls). */
  private static ObjectNode dropNulls(ObjectNode o) {
    List<String> nulls = new ArrayList<>();
    o.fields()
        .forEachRemaining(
            e -> {
              if (e.getValue().isNull()) {
                nulls.add(e.getKey());
              } else if (e.getValue().isObject() && !e.getKey().equals("partitionValues")
                  && !e.getKey().equals("tags")) {
                dropNulls((ObjectNode) e.getValue());
              }
            });
    o.remove(nulls);
    return o;
  }

  // ----------------------------------------------------------------------------------------------
  // Errors
  // ----------------------------------------------------------------------------------------------

  /** An error whose spec code (spec/checkpoints.md § 21) is already known. */
  static final class CodedError extends RuntimeException {
    final String code;

    CodedError(String code, String message) {
      super(message);
      this.code = code;
    }
  }

  private static String describe(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null && sb.length() < 900; c = c.getCause()) {
      if (sb.length() > 0) sb.append(" | caused by ");
      sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
      if (c.getCause() == c) break;
    }
    return sb.length() > 900 ? sb.substring(0, 900) : sb.toString();
  }

  /**
   * Kernel exceptions -> spec error codes. Typed exceptions first, then Kernel's messages (which
   * are not a stable API: the mapping is pinned to Kernel 4.4.0 and documented in README.md).
   * Anything unrecognised is INTERNAL_ERROR, which fails the test and shows the message.
   */
  static String classify(Throwable t, String op) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof TableNotFoundException) {
        return TABLE_NOT_FOUND_AS_GAP.matcher(String.valueOf(c.getMessage())).find()
            ? "LOG_GAP"
            : "TABLE_NOT_FOUND";
      }
      if (c instanceof UnsupportedTableFeatureException
          || c instanceof UnsupportedProtocolVersionException) {
        return "cleanup".equals(op) ? "UNSUPPORTED_WRITER_FEATURE" : "UNSUPPORTED_READER_FEATURE";
      }
      if (c instanceof java.io.FileNotFoundException || c instanceof java.nio.file.NoSuchFileException) {
        String m = String.valueOf(c.getMessage());
        // Kernel resolves a sidecar path against _delta_log/_sidecars/ as given: a path that
        // already names the folder ends up in _sidecars/_sidecars/ and is not found.
        if (m.contains("_sidecars/_sidecars/")) return "SIDECAR_PATH_INVALID";
        if (m.contains("_sidecars/")) return "SIDECAR_MISSING";
        if (m.contains(".checkpoint.")) return "CHECKPOINT_CORRUPT";
      }
    }
    String text = describe(t);
    for (Object[] rule : MESSAGE_RULES) {
      if (((Pattern) rule[0]).matcher(text).find()) {
        return (String) rule[1];
      }
    }
    if (t instanceof InvalidTableException) {
      return "LOG_CORRUPT";
    }
    return "INTERNAL_ERROR";
  }

  private static final Pattern TABLE_NOT_FOUND_AS_GAP =
      Pattern.compile("Missing delta file|not contiguous", Pattern.CASE_INSENSITIVE);

  /** (pattern, code), first match wins; matched against the whole cause chain's messages. */
  private static final Object[][] MESSAGE_RULES = {
    {p("No protocol found"), "MISSING_PROTOCOL"},
    {p("No metadata found"), "MISSING_METADATA"},
    {p("versions are not contiguous|Delta versions must be contiguous|Missing delta file"), "LOG_GAP"},
    {p("must equal checkpointVersion \\+ 1"), "LOG_GAP"},
    {
      p(
          "Cannot load table version|before the first available|after the latest|"
              + "earliest available|versionToLoad|Trying to load a non-existent version|"
              + "No recreatable commits|"
              + "No delta files found|is not available"),
      "VERSION_NOT_FOUND"
    },
    {p("_sidecars/_sidecars/"), "SIDECAR_PATH_INVALID"},
    {p("_sidecars/\\S* (does not exist|not found)|FileNotFoundException.*_sidecars/"), "SIDECAR_MISSING"},
    {p("not a Parquet file|is not a parquet file|Corrupt|EOFException|magic number"), "CHECKPOINT_CORRUPT"},
  };

  private static Pattern p(String regex) {
    return Pattern.compile(regex, Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  }
}
