import java.io.File;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.type.ObjectDataType;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.backend.h2.H2UniqueIndex;

/**
 * Local MongoDB wire-compatible server for development and tests.
 *
 * Usage: java -cp classes:lib/* Launcher <port> <h2-file> [--host 127.0.0.1] [--version 4.4.0] [--no-oplog]
 *
 * Backed by mongo-java-server with its H2 MVStore backend, so data lives in one file on disk.
 * On SIGTERM/SIGINT a shutdown hook stops the server and closes the MVStore (flushes data).
 */
public final class Launcher {

    /** Reported server version; the wire version is derived from it (driver 7.x needs >= 9 / MongoDB 4.4). */
    static final class ReportedVersion implements MongoVersion {
        private final List<Integer> versionArray;
        private final int wireVersion;

        ReportedVersion(String version) {
            String[] parts = version.split("\\.");
            List<Integer> array = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                array.add(i < parts.length ? Integer.parseInt(parts[i]) : 0);
            }
            this.versionArray = array;
            this.wireVersion = wireVersionFor(array.get(0), array.get(1));
        }

        private static int wireVersionFor(int major, int minor) {
            if (major >= 8) return 25;
            if (major == 7) return 21;
            if (major == 6) return 17;
            if (major == 5) return 13;
            if (major == 4 && minor >= 4) return 9;
            if (major == 4 && minor >= 2) return 8;
            if (major == 4) return 7;
            return 6;
        }

        @Override
        public List<Integer> getVersionArray() {
            return versionArray;
        }

        @Override
        public int getWireVersion() {
            return wireVersion;
        }
    }

    /**
     * The key type of every unique index (`_id` included). H2's default, ObjectDataType, orders two
     * index keys (KeyValue, not Comparable) by their Java-serialized bytes, and serializes both on
     * every comparison of a lookup's binary search: under a write burst that was about 40 % of the
     * engine's CPU (JFR profile, bench/RESULTS.md). This type keeps that order and the bytes on disk
     * exactly (files written before read back unchanged) but remembers each key's bytes, by
     * identity (a KeyValue never changes): the searched key's across the levels of the tree, the
     * stored keys' across searches.
     */
    static final class RememberedKeyOrder extends ObjectDataType {
        /** Shared by all indexes; dropped whole when full (then rebuilt by the next lookups). */
        private static final ConcurrentHashMap<Identity, byte[]> SERIALIZED = new ConcurrentHashMap<>();
        private static final int MAX_REMEMBERED = 100_000;

        private static final class Identity {
            private final Object key;
            private final int hash;

            Identity(Object key) {
                this.key = key;
                this.hash = System.identityHashCode(key);
            }

            @Override
            public int hashCode() {
                return hash;
            }

            @Override
            public boolean equals(Object other) {
                return other instanceof Identity && ((Identity) other).key == key;
            }
        }

        private static byte[] bytesOf(Object key) {
            Identity identity = new Identity(key);
            byte[] bytes = SERIALIZED.get(identity);
            if (bytes == null) {
                bytes = serialize(key);
                if (SERIALIZED.size() >= MAX_REMEMBERED) SERIALIZED.clear();
                SERIALIZED.put(identity, bytes);
            }
            return bytes;
        }

        @Override
        public int compare(Object a, Object b) {
            if (a == b) return 0;
            if (a instanceof KeyValue && b instanceof KeyValue) return compareNotNull(bytesOf(a), bytesOf(b));
            return super.compare(a, b);
        }

        /** BasicDataType's search (same probes, same answer), with the searched key serialized once. */
        @Override
        public int binarySearch(Object key, Object storage, int size, int initialGuess) {
            Object[] keys = (Object[]) storage;
            if (!(key instanceof KeyValue)) return super.binarySearch(key, storage, size, initialGuess);
            byte[] searched = bytesOf(key); // the same key object is searched again on every level of the tree
            int low = 0;
            int high = size - 1;
            int x = initialGuess - 1;
            if (x < 0 || x > high) x = high >>> 1;
            while (low <= high) {
                // Nothing returned yet: a key of another kind (never seen in an index) leaves the search to H2.
                if (!(keys[x] instanceof KeyValue)) return super.binarySearch(key, storage, size, initialGuess);
                int compare = keys[x] == key ? 0 : compareNotNull(searched, bytesOf(keys[x]));
                if (compare > 0) low = x + 1;
                else if (compare < 0) high = x - 1;
                else return x;
                x = (low + high) >>> 1;
            }
            return -(low + 1);
        }
    }

    /** H2Database whose unique indexes use RememberedKeyOrder (same map names as H2Database gives them). */
    static final class RememberedOrderDatabase extends H2Database {
        private static final Field STORE;
        private static final Constructor<H2UniqueIndex> UNIQUE_INDEX;

        static {
            try {
                STORE = H2Database.class.getDeclaredField("mvStore");
                STORE.setAccessible(true);
                UNIQUE_INDEX = H2UniqueIndex.class.getDeclaredConstructor(MVMap.class, String.class, List.class, boolean.class);
                UNIQUE_INDEX.setAccessible(true);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        RememberedOrderDatabase(String databaseName, MVStore store, CursorRegistry cursors) {
            super(databaseName, store, cursors);
        }

        @Override
        protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            try {
                // Read by reflection: H2Database's constructor opens the indexes before this class's fields exist.
                MVStore store = (MVStore) STORE.get(this);
                MVMap<KeyValue, Object> map = store.openMap(getFullCollectionNamespace(collectionName) + "._index_" + indexName,
                    new MVMap.Builder<KeyValue, Object>().keyType(new RememberedKeyOrder()));
                return UNIQUE_INDEX.newInstance(map, indexName, keys, sparse);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot open index " + indexName + " of " + collectionName, e);
            }
        }
    }

    static final class RememberedOrderBackend extends H2Backend {
        RememberedOrderBackend(String file) {
            super(file);
        }

        @Override
        protected MongoDatabase openOrCreateDatabase(String databaseName) {
            return new RememberedOrderDatabase(databaseName, getMvStore(), getCursorRegistry());
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Launcher <port> <h2-file> [--host 127.0.0.1] [--version 4.4.0] [--no-oplog]");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        String file = new File(args[1]).getAbsolutePath();
        String host = "127.0.0.1";
        String version = "4.4.0";
        boolean oplog = true;
        List<String> rest = Arrays.asList(args).subList(2, args.length);
        for (int i = 0; i < rest.size(); i++) {
            switch (rest.get(i)) {
                case "--host": host = rest.get(++i); break;
                case "--version": version = rest.get(++i); break;
                case "--no-oplog": oplog = false; break;
                default:
                    System.err.println("unknown argument: " + rest.get(i));
                    System.exit(2);
            }
        }

        File parent = new File(file).getParentFile();
        if (parent != null) {
            parent.mkdirs();
        }

        H2Backend backend = new RememberedOrderBackend(file);
        // MVStore commits in the background (default every 1000 ms); shorten the window of writes
        // lost on a hard kill. SIGTERM/SIGINT always flush everything via the shutdown hook.
        backend.getMvStore().setAutoCommitDelay(200);
        ReportedVersion reported = new ReportedVersion(version);
        backend.version(reported);
        MongoServer server = new MongoServer(backend);
        if (oplog) {
            server.enableOplog();
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("mongo-launcher: shutting down");
            try {
                server.shutdown(); // stops listening, closes event loops, closes backend (MVStore.close -> flush)
            } catch (Throwable t) {
                t.printStackTrace();
                try {
                    backend.close();
                } catch (Throwable ignored) {
                }
            }
            System.out.println("mongo-launcher: stopped");
            System.out.flush();
            stopped.countDown();
        }, "mongo-launcher-shutdown"));

        try {
            server.bind(host, port);
        } catch (Throwable t) {
            System.err.println("mongo-launcher: failed to bind " + host + ":" + port + ": " + t);
            System.exit(1);
        }
        System.out.println("mongo-launcher: READY mongodb://" + host + ":" + port + " file=" + file
            + " version=" + reported.toVersionString() + " wire=" + reported.getWireVersion() + " oplog=" + oplog);
        System.out.flush();

        // Keep the main thread alive until shutdown (netty threads are non-daemon anyway).
        stopped.await();
    }
}
