import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;

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

        H2Backend backend = new H2Backend(file);
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
