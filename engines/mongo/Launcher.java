import java.io.File;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;
import de.bwaldvogel.mongo.bson.BinData;
import de.bwaldvogel.mongo.bson.BsonJavaScript;
import de.bwaldvogel.mongo.bson.BsonTimestamp;
import de.bwaldvogel.mongo.bson.Decimal128;
import de.bwaldvogel.mongo.bson.LegacyUUID;
import de.bwaldvogel.mongo.bson.MaxKey;
import de.bwaldvogel.mongo.bson.MinKey;
import de.bwaldvogel.mongo.wire.BsonConstants;
import de.bwaldvogel.mongo.wire.OpCode;
import de.bwaldvogel.mongo.wire.message.MongoMessage;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import org.h2.mvstore.type.ObjectDataType;

import io.netty.buffer.ByteBuf;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoThreadFactory;
import de.bwaldvogel.mongo.wire.MessageFlag;
import de.bwaldvogel.mongo.wire.MongoDatabaseHandler;
import de.bwaldvogel.mongo.wire.MongoExceptionHandler;
import de.bwaldvogel.mongo.wire.MongoWireProtocolHandler;
import de.bwaldvogel.mongo.wire.MongoWireReplyEncoder;
import de.bwaldvogel.mongo.wire.message.ClientRequest;
import de.bwaldvogel.mongo.wire.message.MessageHeader;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.oplog.Oplog;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.AbstractUniqueIndex;
import de.bwaldvogel.mongo.backend.ArrayFilters;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.backend.h2.H2UniqueIndex;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import de.bwaldvogel.mongo.exception.DuplicateKeyError;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;

/**
 * Local MongoDB wire-compatible server for development and tests.
 *
 * Usage: java -cp classes:lib/* Launcher <port> <h2-file> [--host 127.0.0.1] [--version 4.4.0] [--no-oplog] [--values bson|legacy] [--retention-ms N]
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
        /**
         * Bounded, and dropped whole when full: each entry holds its key strongly, and every page read
         * from the file brings new key objects (new identities), so a cap sized to the keys in use
         * (millions) filled the old generation with dead keys and the engine spent most of its CPU in
         * the garbage collector (bench/RESULTS.md, issue 24 growth).
         */
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

        /**
         * Writes a key as ObjectDataType does (its serialized-object tag, the length, the Java-serialized
         * bytes: the same bytes on disk), from the remembered bytes: every commit writes each changed
         * page whole, so a page of 40 keys serialized 40 keys again for each key added to it (under a
         * write burst the store's serialization thread spent most of its time in ObjectOutputStream).
         * Index keys (KeyValue) and ObjectId `_id`s (the data's keys, e.g. the change feed's rows).
         */
        @Override
        public void write(WriteBuffer buffer, Object key) {
            if (key instanceof KeyValue || key instanceof ObjectId) {
                byte[] bytes = bytesOf(key);
                averageSize = (int) ((bytes.length * 2 + 15L * averageSize) / 16);
                buffer.put((byte) TYPE_SERIALIZED_OBJECT).putVarInt(bytes.length).put(bytes);
                return;
            }
            super.write(buffer, key);
        }

        /**
         * H2's estimate of such a key in memory, kept as H2 keeps it (twice the serialized size, a
         * moving average over the keys written), since `write` above bypasses H2's own: its starting
         * value (10,000 bytes a key) made MVStore split pages every few keys and size its cache by it.
         */
        private volatile int averageSize = 400;

        @Override
        public int getMemory(Object key) {
            return key instanceof KeyValue || key instanceof ObjectId ? averageSize : super.getMemory(key);
        }

        /** ObjectDataType's tag of a Java-serialized value (package-private there; fixed by the file format). */
        private static final int TYPE_SERIALIZED_OBJECT = 19;

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

    /**
     * A non-unique (or partial, sparse, TTL) index, which mongo-java-server itself ignores: one entry per
     * key of a document (one per array element for an array field), ordered by MongoDB's value order
     * and the index's directions, then by position (the document's `_id`). Kept in memory, built from
     * the documents after the engine starts (IndexBuilder) or when declared: nothing on disk to keep in step,
     * and a file written by an older launcher needs nothing. It holds every
     * document (a partial or sparse index holds a superset, which serves the same queries): the
     * matcher still filters what an index scan returns, so a scan only has to be a superset.
     */
    static final class SecondaryIndex extends Index<Object> {
        /** Bounds of a scan, outside every value whatever the index's direction. */
        static final Object LOW = new Object();
        static final Object HIGH = new Object();

        static final class Entry {
            final Object[] values;
            final Object position;

            Entry(Object[] values, Object position) {
                this.values = values;
                this.position = position;
            }
        }

        private final boolean[] ascending;
        private final NavigableSet<Entry> entries;
        /**
         * The same entries grouped by their first two values, when both are strings and the second key
         * has many values (an index led by a site and an entry id): a scan whose bounds fix both (a
         * search's lookups among candidates) reads its group's few entries, found by hash, instead of
         * seeking through every entry of the index. A seek in a skip list of millions walks about forty
         * nodes, each a cache miss or more: ~25 µs per lookup (bench/RESULTS.md, search, session 14).
         * Made when the second key turns out to have many values, then kept with `entries` by every
         * write (writes hold the collection's lock).
         */
        private volatile ConcurrentHashMap<GroupKey, ConcurrentSkipListSet<Entry>> groups;

        record GroupKey(String first, String second) {
        }

        /** An array value was indexed: its entries' order is not a sort order (MongoDB sorts arrays by their least/greatest element). */
        private volatile boolean multikey;
        /** A document could not be indexed (an empty array, a value the comparator refuses): never used to answer queries. */
        private volatile boolean incomplete;
        /**
         * Filled after the engine listens (IndexBuilder) or when declared, not when the collection opens: opening a file
         * with big collections would otherwise read every document before the engine answers (and
         * scripts/engines.mjs gives it 90 s). Until then it keeps nothing and serves nothing.
         */
        private volatile boolean built;

        /** Each key's path, split once (the library splits it with a regular expression on every read of a value). */
        private final String[][] paths;
        /**
         * Per key, one instance of each string value while the key has few distinct ones (a site, a
         * locale, a status, a type): entries share it, so comparing two entries' equal values is an
         * identity check, and a million entries do not hold a million copies of the same site id.
         */
        private final ConcurrentHashMap<String, String>[] interned;
        private final boolean[] manyValues;
        /** Past this many distinct values a key (an id, a word, a date) is no longer interned. */
        private static final int MAX_INTERNED = 1000;

        @SuppressWarnings("unchecked")
        SecondaryIndex(String name, List<IndexKey> keys, boolean sparse) {
            super(name, keys, sparse);
            ascending = new boolean[keys.size()];
            for (int i = 0; i < ascending.length; i++) ascending[i] = keys.get(i).isAscending();
            entries = new ConcurrentSkipListSet<>(this::compareEntries);
            paths = new String[keys.size()][];
            for (int i = 0; i < paths.length; i++) paths[i] = keys.get(i).getKey().split("\\.", -1);
            interned = new ConcurrentHashMap[keys.size()];
            for (int i = 0; i < interned.length; i++) interned[i] = new ConcurrentHashMap<>();
            manyValues = new boolean[keys.size()];
        }

        /**
         * The index's own instance of a query's value, when it keeps one (a key of few distinct values):
         * a scan's bounds then compare to the entries' equal values by identity. A value decoded from
         * the request is a new string, and a seek compared it to every entry on its way in full (a
         * site id of 26 characters, on every level of the list).
         */
        Object shared(int key, Object value) {
            if (!(value instanceof String) || manyValues[key]) return value;
            String mine = interned[key].get(value);
            return mine != null ? mine : value;
        }

        private Object intern(int key, Object value) {
            if (!(value instanceof String) || manyValues[key]) return value;
            String shared = interned[key].putIfAbsent((String) value, (String) value);
            if (shared != null) return shared;
            if (interned[key].size() > MAX_INTERNED) {
                manyValues[key] = true;
                interned[key].clear();
            }
            return value;
        }

        /**
         * The index's values of a document none of whose keys' paths holds an array or ends in a
         * subdocument (nearly every document), read directly and normalized as the library's
         * `KeyValue.normalized` does (missing → null, numbers → double but for longs a double cannot
         * hold); null when the library's path is needed (arrays make several entries).
         */
        private Object[] plainValues(Document document) {
            Object[] values = new Object[paths.length];
            for (int i = 0; i < paths.length; i++) {
                Object value = document;
                for (String part : paths[i]) {
                    if (value instanceof Collection) return null;
                    if (!(value instanceof Document)) {
                        value = null;
                        break;
                    }
                    value = ((Document) value).get(part);
                }
                if (value instanceof Collection || value instanceof Map) return null;
                values[i] = intern(i, normalized(value));
            }
            return values;
        }

        private static Object normalized(Object value) {
            if (Missing.isNullOrMissing(value)) return null;
            if (value instanceof Long && ((Long) value).longValue() != (long) ((Long) value).doubleValue()) return value;
            if (value instanceof Number) {
                double number = ((Number) value).doubleValue();
                return Double.valueOf(number == -0.0 ? 0.0 : number);
            }
            return value;
        }

        static int compareComponent(Object a, Object b, boolean ascending) {
            if (a == b) return 0;
            if (a == LOW || b == HIGH) return -1;
            if (a == HIGH || b == LOW) return 1;
            // Two strings (most index keys), two doubles (the index's numbers), two dates: ValueComparator's
            // answer (Double.compare, with -0.0 equal to 0.0) without its walk of the type order. Null
            // (a missing key too) sorts below every other value but MinKey: an index holding both
            // (an entry's `live.slug` or `authorId`, a row without the postings' keys among postings)
            // compared them there, about 6 % of the engine's time in an import (bench/RESULTS.md, session 23).
            int c;
            if (a instanceof String && b instanceof String) c = ((String) a).compareTo((String) b);
            else if (a == null && !(b instanceof MinKey) && !Missing.isNullOrMissing(b)) c = -1;
            else if (b == null && !(a instanceof MinKey) && !Missing.isNullOrMissing(a)) c = 1;
            else if (a instanceof Double && b instanceof Double) {
                double x = (Double) a;
                double y = (Double) b;
                c = x == y ? 0 : Double.compare(x, y);
            } else if (a instanceof java.time.Instant && b instanceof java.time.Instant) c = ((java.time.Instant) a).compareTo((java.time.Instant) b);
            else c = ValueComparator.asc().compare(a, b);
            return ascending ? c : -c;
        }

        private boolean sameValues(Object[] x, Object[] y) {
            for (int i = 0; i < x.length; i++) {
                if (compareComponent(x[i], y[i], true) != 0) return false;
                // Equal in index order but told apart by MongoDB's type order only through their class (1 and 1.0 are one key).
                if (x[i] != null && y[i] != null && x[i].getClass() != y[i].getClass()) return false;
            }
            return true;
        }

        int compareEntries(Entry x, Entry y) {
            for (int i = 0; i < ascending.length; i++) {
                int c = compareComponent(x.values[i], y.values[i], ascending[i]);
                if (c != 0) return c;
            }
            return compareComponent(x.position, y.position, true);
        }

        boolean usable() {
            return !incomplete;
        }

        boolean isBuilt() {
            return built;
        }

        /** An entry's (or a bound's) group, or null when its first two values are not both strings. */
        private GroupKey groupOf(Object[] values) {
            return values.length >= 3 && values[0] instanceof String first && values[1] instanceof String second ? new GroupKey(first, second) : null;
        }

        private void put(Entry entry) {
            entries.add(entry);
            ConcurrentHashMap<GroupKey, ConcurrentSkipListSet<Entry>> grouped = groups;
            if (grouped == null) {
                if (ascending.length >= 3 && manyValues[1]) startGroups();
                return;
            }
            addToGroup(grouped, entry);
        }

        private void addToGroup(ConcurrentHashMap<GroupKey, ConcurrentSkipListSet<Entry>> grouped, Entry entry) {
            GroupKey group = groupOf(entry.values);
            if (group != null) grouped.computeIfAbsent(group, g -> newGroup()).add(entry);
        }

        private void delete(Entry entry) {
            entries.remove(entry);
            ConcurrentHashMap<GroupKey, ConcurrentSkipListSet<Entry>> grouped = groups;
            GroupKey group = grouped == null ? null : groupOf(entry.values);
            if (group == null) return;
            ConcurrentSkipListSet<Entry> members = grouped.get(group);
            if (members == null) return;
            members.remove(entry);
            if (members.isEmpty()) grouped.remove(group, members);
        }

        private void startGroups() {
            ConcurrentHashMap<GroupKey, ConcurrentSkipListSet<Entry>> grouped = new ConcurrentHashMap<>();
            for (Entry entry : entries) addToGroup(grouped, entry);
            groups = grouped;
        }

        /** A group's entries share their first two values: ordered from the third on (the second, an id, compared in full on every step otherwise). */
        private ConcurrentSkipListSet<Entry> newGroup() {
            return new ConcurrentSkipListSet<>((x, y) -> compareAfter(x, y, 2));
        }

        private void clearEntries() {
            groups = null;
            entries.clear();
        }

        /** The entries between two bounds (both included): from their group when both fix it. */
        private NavigableSet<Entry> range(Object[] from, Object[] to) {
            NavigableSet<Entry> within = entries;
            ConcurrentHashMap<GroupKey, ConcurrentSkipListSet<Entry>> grouped = groups;
            GroupKey group = grouped == null ? null : groupOf(from);
            if (group != null && group.equals(groupOf(to))) {
                within = grouped.get(group);
                if (within == null) return java.util.Collections.emptyNavigableSet();
            }
            return within.subSet(new Entry(from, LOW), true, new Entry(to, HIGH), true);
        }
        /**
         * A build from the collection's documents, in three steps so that one pass over the documents
         * fills all of a collection's indexes (IndexedCollection.buildSecondaryIndexes); the caller
         * holds the collection's lock throughout (no write runs meanwhile).
         */
        void startBuild() {
            clearEntries();
            multikey = false;
            incomplete = false;
        }

        void buildWith(Document document, Object position) {
            addEntries(document, position);
        }

        void finishBuild() {
            built = true;
        }

        boolean isMultikey() {
            return multikey;
        }

        boolean isAscending(int key) {
            return ascending[key];
        }

        private List<Entry> entriesOf(Document document, Object position) {
            Object[] plain = plainValues(document);
            if (plain != null) return List.of(new Entry(plain, position));
            Set<KeyValue> keyValues = getKeyValues(document);
            if (keyValues.isEmpty()) {
                // An empty array has no element to index; MongoDB keeps one entry for it, so does this (as null):
                // a scan on the index's other keys must still find the document.
                Document copy = document.cloneDeeply();
                for (String key : keys()) {
                    Object value = Utils.getSubdocumentValueCollectionAware(document, key);
                    if (value instanceof Collection && ((Collection<?>) value).isEmpty()) Utils.changeSubdocumentValue(copy, key, null);
                }
                keyValues = getKeyValues(copy);
            }
            List<Entry> list = new ArrayList<>(keyValues.size());
            for (KeyValue keyValue : keyValues) {
                Object[] values = new Object[keyValue.size()];
                for (int i = 0; i < values.length; i++) values[i] = keyValue.get(i);
                list.add(new Entry(values, position));
            }
            return list;
        }

        private static Object positionOf(Document document) {
            return Missing.ofNullable(document.get("_id"));
        }

        @Override
        public Object getPosition(Document document) {
            return null; // positions come from the _id index
        }

        @Override
        public void checkAdd(Document document, MongoCollection<Object> collection) {
            if (plainValues(document) == null) getKeyValues(document); // refuses parallel arrays before the document is stored, as MongoDB does
        }

        @Override
        public void add(Document document, Object position, MongoCollection<Object> collection) {
            if (built) addEntries(document, position);
        }

        private void addEntries(Document document, Object position) {
            try {
                Object[] plain = plainValues(document);
                if (plain != null) {
                    put(new Entry(plain, position));
                    return;
                }
                List<Entry> list = entriesOf(document, position);
                if (list.isEmpty()) incomplete = true;
                for (String key : keys()) {
                    if (Utils.getSubdocumentValueCollectionAware(document, key) instanceof Collection) multikey = true;
                }
                for (Entry entry : list) put(entry);
            } catch (RuntimeException e) {
                incomplete = true;
            }
        }

        @Override
        public Object remove(Document document) {
            Object position = positionOf(document);
            if (!built) return position;
            try {
                for (Entry entry : entriesOf(document, position)) delete(entry);
            } catch (RuntimeException e) {
                incomplete = true;
            }
            return position;
        }

        @Override
        public boolean canHandle(Document query) {
            return false; // IndexedCollection plans its queries itself
        }

        @Override
        public Iterable<Object> getPositions(Document query) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long getCount() {
            return entries.size();
        }

        @Override
        public boolean isEmpty() {
            return false; // never filled by the library's addIndex: built by IndexedCollection.buildSecondaryIndexes (see built)
        }

        @Override
        public long getDataSize() {
            return getCount();
        }

        @Override
        public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<Object> collection) {
            if (plainValues(newDocument) == null) getKeyValues(newDocument);
        }

        @Override
        public void updateInPlace(Document oldDocument, Document newDocument, Object position, MongoCollection<Object> collection) {
            if (!built) return;
            Object[] before = plainValues(oldDocument);
            Object[] after = before == null ? null : plainValues(newDocument);
            if (after != null && sameValues(before, after)) return; // this index's keys did not change: its entry stays
            try {
                for (Entry entry : entriesOf(oldDocument, position)) delete(entry);
            } catch (RuntimeException e) {
                incomplete = true;
            }
            add(newDocument, position, collection);
        }

        @Override
        public void drop() {
            clearEntries();
        }

        /**
         * Positions of the entries of several ranges that differ only in their first `fixed` keys
         * (each an equality: the points of `$in`s), in the order of the keys after those, or reversed:
         * each range read in index order, merged (MongoDB's "explode for sort"). Reads no further than
         * the consumer takes.
         */
        Stream<Entry> mergedScan(List<Object[]> from, List<Object[]> to, boolean reverse, int fixed) {
            Comparator<Entry> order = (x, y) -> compareAfter(x, y, fixed);
            Comparator<Entry> merged = reverse ? order.reversed() : order;
            java.util.PriorityQueue<Map.Entry<Entry, java.util.Iterator<Entry>>> heads =
                new java.util.PriorityQueue<>((a, b) -> merged.compare(a.getKey(), b.getKey()));
            for (int i = 0; i < from.size(); i++) {
                NavigableSet<Entry> range = range(from.get(i), to.get(i));
                java.util.Iterator<Entry> iterator = (reverse ? range.descendingSet() : range).iterator();
                if (iterator.hasNext()) heads.add(Map.entry(iterator.next(), iterator));
            }
            java.util.Iterator<Entry> positions = new java.util.Iterator<>() {
                @Override
                public boolean hasNext() {
                    return !heads.isEmpty();
                }

                @Override
                public Entry next() {
                    Map.Entry<Entry, java.util.Iterator<Entry>> head = heads.poll();
                    if (head == null) throw new java.util.NoSuchElementException();
                    if (head.getValue().hasNext()) heads.add(Map.entry(head.getValue().next(), head.getValue()));
                    return head.getKey();
                }
            };
            return java.util.stream.StreamSupport.stream(java.util.Spliterators.spliteratorUnknownSize(positions, java.util.Spliterator.ORDERED), false);
        }

        /** The order of two entries on the keys from `from` on, then by position. */
        private int compareAfter(Entry x, Entry y, int from) {
            for (int i = from; i < ascending.length; i++) {
                int c = compareComponent(x.values[i], y.values[i], ascending[i]);
                if (c != 0) return c;
            }
            return compareComponent(x.position, y.position, true);
        }

        /** The entries between two bounds (both included), in index order or reversed. */
        Stream<Entry> scan(Object[] from, Object[] to, boolean reverse) {
            NavigableSet<Entry> range = range(from, to);
            return (reverse ? range.descendingSet() : range).stream();
        }

        /**
         * A query this index answers alone, as MongoDB's covered queries (no FETCH): the index holds no
         * array, the projection only includes keys of the index (and `_id`, the entry's position), and
         * every field the filter names is a key, with an equality, `$in` or range only. The document
         * made of an entry's keys then matches and projects as the stored one would.
         */
        boolean covers(Document query, Document projection) {
            if (multikey || projection == null || projection.isEmpty()) return false;
            Set<String> keys = new java.util.HashSet<>(keys());
            for (String key : keys) if (key.contains(".")) return false; // an entry's document is flat
            for (Map.Entry<String, Object> field : projection.entrySet()) {
                boolean included = field.getValue() instanceof Number ? ((Number) field.getValue()).intValue() != 0 : Boolean.TRUE.equals(field.getValue());
                if (field.getKey().equals("_id")) continue;
                if (!included || !keys.contains(field.getKey())) return false;
            }
            for (Map.Entry<String, Object> clause : query.entrySet()) {
                if (!keys.contains(clause.getKey()) && !clause.getKey().equals("_id")) return false;
                Object value = clause.getValue();
                if (value instanceof Document) {
                    for (String operator : ((Document) value).keySet()) {
                        if (!COVERED_OPERATORS.contains(operator)) return false;
                    }
                } else if (value == null || !Condition.indexable(value)) {
                    return false; // null also matches a missing field, which the entry holds as null: left to the stored document
                }
            }
            return true;
        }

        private static final Set<String> COVERED_OPERATORS = Set.of("$eq", "$in", "$gt", "$gte", "$lt", "$lte");

        /**
         * The document an entry stands for in a covered query: its keys and its `_id`; null when a key
         * is null, which the entry holds alike for a null and a missing field (the stored document then
         * tells which).
         */
        Document documentOf(Entry entry) {
            Document document = new Document("_id", entry.position);
            List<String> names = keys();
            for (int i = 0; i < names.size(); i++) {
                if (Missing.isNullOrMissing(entry.values[i])) return null;
                document.put(names.get(i), entry.values[i]);
            }
            return document;
        }
    }

    /**
     * The `_id` index, answered by the collection's data map itself (keyed by `_id`) for the ids the
     * service writes (strings and ObjectIds, which no normalization changes). mongo-java-server's
     * keeps a second H2 map of `KeyValue(_id)` → `_id`: each insert looked its key up twice and put
     * it once, each time Java-serializing a new key object to order it (RememberedKeyOrder), and each
     * commit wrote the map's pages again: a third of the engine's CPU per small insert (a search
     * posting), bench/RESULTS.md. Ids of other kinds (numbers, which MongoDB compares by value, and
     * documents) keep that map, so their semantics are the library's; the two kinds never meet (a
     * string never equals a number). A file of an older launcher opens unchanged: its map's entries
     * for string ids are left alone but for a delete, which removes them too.
     */
    static final class IdIndex extends AbstractUniqueIndex<Object> {
        private final MVMap<KeyValue, Object> other;
        /** The collection's documents by `_id` (IndexedCollection.addIndex): until then every id goes to `other`. */
        private volatile MVMap<Object, Document> data;

        IdIndex(MVMap<KeyValue, Object> other, String name, List<IndexKey> keys, boolean sparse) {
            super(name, keys, sparse);
            this.other = other;
        }

        void bind(MVMap<Object, Document> data) {
            this.data = data;
        }

        private static boolean direct(Object id) {
            return id instanceof String || id instanceof ObjectId;
        }

        /** The id the data map answers for, or null when this key is left to `other`. */
        private Object directId(KeyValue key) {
            return data != null && key.size() == 1 && direct(key.get(0)) ? key.get(0) : null;
        }

        private Object directId(Document document) {
            Object id = document.get("_id");
            return data != null && direct(id) ? id : null;
        }

        @Override
        public synchronized void checkAdd(Document document, MongoCollection<Object> collection) {
            Object id = directId(document);
            if (id == null) {
                super.checkAdd(document, collection);
            } else if (data.containsKey(id)) {
                throw new DuplicateKeyError(this, collection, getKeys(), new KeyValue(id));
            }
        }

        /** Called once the document is in the data map (after checkAdd): nothing more to keep for a direct id. */
        @Override
        public synchronized void add(Document document, Object position, MongoCollection<Object> collection) {
            if (directId(document) == null) super.add(document, position, collection);
        }

        @Override
        public synchronized Object remove(Document document) {
            Object id = directId(document);
            return id == null ? super.remove(document) : removeDocument(new KeyValue(id));
        }

        @Override
        public Object getPosition(Document document) {
            Object id = directId(document);
            if (id == null) return super.getPosition(document);
            return data.containsKey(id) ? id : null;
        }

        @Override
        protected Object removeDocument(KeyValue key) {
            Object id = directId(key);
            if (id == null) return other.remove(key);
            if (!other.isEmpty()) other.remove(key); // an older launcher's entry
            return data.containsKey(id) ? id : null;
        }

        @Override
        protected boolean putKeyPosition(KeyValue key, Object position) {
            return directId(key) != null || other.putIfAbsent(key, Missing.ofNullable(position)) == null;
        }

        @Override
        protected Object getPosition(KeyValue key) {
            Object id = directId(key);
            if (id == null) return other.get(key);
            return data.containsKey(id) ? id : null;
        }

        /** Every key with its position (the library's `_id` regex and range reads, which scan anyway). */
        @Override
        protected Iterable<Map.Entry<KeyValue, Object>> getIterable() {
            MVMap<Object, Document> documents = data;
            if (documents == null) return other.entrySet();
            List<Map.Entry<KeyValue, Object>> all = new ArrayList<>();
            for (Object id : documents.keySet()) if (direct(id)) all.add(Map.entry(new KeyValue(id), id));
            for (Map.Entry<KeyValue, Object> entry : other.entrySet()) if (directId(entry.getKey()) == null) all.add(entry);
            return all;
        }

        @Override
        public long getCount() {
            MVMap<Object, Document> documents = data;
            return documents == null ? other.sizeAsLong() : documents.sizeAsLong();
        }

        @Override
        public boolean isEmpty() {
            MVMap<Object, Document> documents = data;
            return documents == null ? other.isEmpty() : documents.isEmpty();
        }

        @Override
        public long getDataSize() {
            return getCount();
        }
    }

    /** What a query asks of one field, as far as an index can use it: one value, a list of values, or a range. */
    static final class Condition {
        Object equal = HAS_NO_VALUE;
        List<Object> in;
        Object lower = HAS_NO_VALUE;
        Object upper = HAS_NO_VALUE;

        static final Object HAS_NO_VALUE = new Object();

        boolean isEquality() {
            return equal != HAS_NO_VALUE;
        }

        boolean isRange() {
            return lower != HAS_NO_VALUE || upper != HAS_NO_VALUE;
        }

        /** The values an equality on this field stands for, or null when it is not one. */
        List<Object> points() {
            if (isEquality()) return List.of(Missing.ofNullable(equal));
            return in;
        }

        /** A value an index entry can be compared with for equality: not an array (matched element-wise), not a document, not a pattern. */
        static boolean indexable(Object value) {
            return !(value instanceof Collection) && !(value instanceof Map) && !BsonRegularExpression.isRegularExpression(value)
                && !(value instanceof java.util.regex.Pattern);
        }

        /** Reads the conditions of a filter on its fields (top level and inside `$and`); whatever else it says is left to the matcher. */
        static Map<String, Condition> of(Document query) {
            Map<String, Condition> conditions = new LinkedHashMap<>();
            collect(query, conditions);
            return conditions;
        }

        @SuppressWarnings("unchecked")
        private static void collect(Document query, Map<String, Condition> conditions) {
            for (Map.Entry<String, Object> clause : query.entrySet()) {
                String field = clause.getKey();
                Object value = clause.getValue();
                if (field.equals("$and") && value instanceof Collection) {
                    for (Object part : (Collection<Object>) value) if (part instanceof Document) collect((Document) part, conditions);
                    continue;
                }
                if (field.startsWith("$")) continue;
                Condition condition = conditions.computeIfAbsent(field, f -> new Condition());
                if (value instanceof Document && isOperatorDocument((Document) value)) {
                    for (Map.Entry<String, Object> op : ((Document) value).entrySet()) condition.apply(op.getKey(), op.getValue());
                } else if (indexable(value)) {
                    condition.equal = value;
                }
            }
        }

        private static boolean isOperatorDocument(Document value) {
            if (value.isEmpty()) return false;
            for (String key : value.keySet()) if (!key.startsWith("$")) return false;
            return true;
        }

        @SuppressWarnings("unchecked")
        private void apply(String operator, Object operand) {
            switch (operator) {
                case "$eq":
                    if (indexable(operand)) equal = operand;
                    break;
                case "$in":
                    if (operand instanceof Collection && in == null) {
                        List<Object> values = new ArrayList<>();
                        for (Object v : (Collection<Object>) operand) {
                            if (!indexable(v)) return;
                            values.add(v);
                        }
                        in = values;
                    }
                    break;
                case "$gt":
                case "$gte":
                    if (operand != null && indexable(operand) && lower == HAS_NO_VALUE) lower = operand;
                    break;
                case "$lt":
                case "$lte":
                    if (operand != null && indexable(operand) && upper == HAS_NO_VALUE) upper = operand;
                    break;
                default:
                    break; // $ne, $exists, $regex, ...: the matcher's work
            }
        }
    }

    /**
     * An H2 collection that answers a query from the best index it has, the way MongoDB's planner
     * would: a unique index whose every key the query fixes (a point lookup), or a secondary index
     * scanned over the equality prefix, then a range on the next key; when the index's order is the
     * sort's (after the equality prefix, all keys in the index's directions or all reversed) the
     * scan is read in that order and stops at skip + limit, with no sort in memory.
     */
    static final class IndexedCollection extends H2Collection {
        /** MONGO_LOG_SCANS=1: a line in the engine's log for every query that reads a whole collection of 1,000 documents or more. */
        private static final boolean LOG_SCANS = "1".equals(System.getenv("MONGO_LOG_SCANS"));

        private final MVMap<Object, Document> data;

        IndexedCollection(MongoDatabase database, String name, CollectionOptions options, MVMap<Object, Document> data,
                          MVMap<String, Object> meta, CursorRegistry cursors) {
            super(database, name, options, data, meta, cursors);
            this.data = data;
        }

        /**
         * The library keeps each collection's size in bytes (collStats' `size`) by encoding every
         * document it inserts, and both forms of every update, to BSON once more, and writing the
         * figure to the collection's meta map: about a tenth of an insert's CPU. The service reads no
         * collStats; the figure stays what the file last recorded (engines/README.md).
         */
        @Override
        protected boolean tracksDataSize() {
            return false;
        }

        /** Most index scans one query makes for its `$in`s (their product), and most merged into one order (MongoDB: 200). */
        private static final long MAX_SCANS = 10_000;
        private static final long MAX_MERGED_SCANS = 200;

        /**
         * Fills every secondary index of this collection not built yet, in one pass over its documents,
         * under the collection's lock (the lock of its writes, AbstractSynchronizedMongoCollection). Run
         * by the startup build (IndexBuilder) for each collection, when an index is declared, and by a
         * query that reaches a collection before the startup build does. Answers the documents read.
         */
        long buildSecondaryIndexes() {
            synchronized (this) {
                List<SecondaryIndex> pending = new ArrayList<>();
                for (Index<Object> index : getIndexes()) {
                    if (index instanceof SecondaryIndex && !((SecondaryIndex) index).isBuilt()) pending.add((SecondaryIndex) index);
                }
                if (pending.isEmpty()) return 0;
                for (SecondaryIndex index : pending) index.startBuild();
                long[] read = {0};
                withVersionKept(() -> streamAllDocumentsWithPosition().forEach(d -> {
                    read[0]++;
                    for (SecondaryIndex index : pending) index.buildWith(d.getDocument(), d.getPosition());
                }));
                for (SecondaryIndex index : pending) index.finishBuild();
                return read[0];
            }
        }

        /**
         * An index declared (createIndexes) once the engine serves is built at once, like MongoDB's:
         * the collection is usually new (core/first-write.ts declares before the first write), so that
         * costs nothing. Those opened with the file are left to the startup build (IndexBuilder).
         */
        @Override
        public void addIndex(Index<Object> index) {
            if (index instanceof IdIndex && "_id".equals(getIdField())) ((IdIndex) index).bind(data);
            super.addIndex(index);
            if (index instanceof SecondaryIndex && IndexBuilder.serving()) buildSecondaryIndexes();
        }

        /** A way to read a query's candidates; higher score first. */
        private static final class Plan {
            int score;
            Stream<Object> positions;
            /** A secondary index's scan: its entries (positions are theirs), so a covered query reads no document. */
            Stream<SecondaryIndex.Entry> entries;
            SecondaryIndex index;
            boolean ordered;
            /** Point lookups on `_id`: every document found has one of the ids asked for. */
            boolean byId;
        }

        /**
         * Runs a read with the store's current version kept: H2 MVStore frees (and then reuses) the
         * space of chunks no version in use needs once its retention time (45 s) has passed, and
         * compaction moves live pages out of them meanwhile, so a read whose cursor outlives that
         * (the startup build of a collection of 2 million documents, a full scan under load) asked for
         * a page of a chunk that was gone: `MVStoreException: Chunk N not found` (h2database#4383,
         * open; reproduced with H2 2.3.232 and 2.5.252, the latest release: engines/README.md). A
         * registered version keeps its chunks until the read ends, as H2's own transactions do.
         */
        private <T> T withVersionKept(java.util.function.Supplier<T> read) {
            MVStore store = data.getStore();
            MVStore.TxCounter kept = store.registerVersionUsage();
            try {
                return read.get();
            } finally {
                store.deregisterVersionUsage(kept);
            }
        }

        private void withVersionKept(Runnable read) {
            withVersionKept(() -> {
                read.run();
                return null;
            });
        }

        /**
         * Set (under the collection's lock) while an update reads the documents it changes. The
         * library's update changes the document its query returned in place and then puts it back;
         * that object is the data map's own value, which MVStore's background commit may be encoding
         * at that moment and which older versions of the map (a read in progress) still hold: the
         * commit thread met a ConcurrentModificationException, MVStore closed itself ("This store is
         * closed") and the file's last chunk was left unreadable. An update gets copies instead, and
         * the copy it changed is what it puts back; a stored document is never changed.
         */
        private boolean readingForUpdate = false;

        private <T> T forUpdate(java.util.function.Supplier<T> update) {
            boolean outer = readingForUpdate;
            readingForUpdate = true;
            try {
                return update.get();
            } finally {
                readingForUpdate = outer;
            }
        }

        @Override
        public synchronized Document updateDocuments(Document selector, Document updateQuery, ArrayFilters arrayFilters,
                                                     boolean isMulti, boolean isUpsert, Oplog oplog) {
            if (isMulti && !isUpsert && selector.size() == 1 && withoutIdsFound(selector) != selector) {
                return forUpdate(() -> updateEachId(selector, updateQuery, arrayFilters, oplog));
            }
            return forUpdate(() -> super.updateDocuments(selector, updateQuery, arrayFilters, isMulti, isUpsert, oplog));
        }

        /**
         * A multi-update of `{_id: {$in: [...]}}` as one update per id: the library matches the whole
         * selector again for each document it updates (for a positional `$`), so an `$in` of n ids
         * cost n² comparisons (8,000 ids: 4-5 s). Same documents, counts and oplog entries.
         */
        private Document updateEachId(Document selector, Document updateQuery, ArrayFilters arrayFilters, Oplog oplog) {
            int matched = 0;
            int modified = 0;
            Object ids = ((Document) selector.get("_id")).get("$in");
            for (Object id : new LinkedHashSet<>((Collection<?>) ids)) {
                Document one = super.updateDocuments(new Document("_id", id), updateQuery, arrayFilters, false, false, oplog);
                matched += ((Number) one.get("n")).intValue();
                modified += ((Number) one.get("nModified")).intValue();
            }
            Document result = new Document();
            result.put("n", matched);
            result.put("nModified", modified);
            return result;
        }

        @Override
        public synchronized Document findAndModify(Document query) {
            return forUpdate(() -> super.findAndModify(query));
        }

        @Override
        protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                             Document fieldSelector) {
            QueryResult stored = withVersionKept(() -> plannedQuery(query, orderBy, numberToSkip, limit, batchSize, fieldSelector));
            if (!readingForUpdate) return stored;
            // Copied as the update reaches them: a single update copies the one document it changes.
            Iterable<Document> copies = () -> StreamSupport.stream(stored.spliterator(), false).map(Document::cloneDeeply).iterator();
            return new QueryResult(copies, stored.getCursorId());
        }

        private QueryResult plannedQuery(Document query, Document orderBy, int numberToSkip, int limit, int batchSize,
                                         Document fieldSelector) {
            Plan plan = query == null || isNatural(orderBy) ? null : plan(query, orderBy);
            if (plan == null) {
                if (LOG_SCANS && count() >= 1000) System.err.println("mongo-launcher: full scan of " + getFullName() + " (" + count() + ") for " + query + " sort " + orderBy);
                return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
            }
            Stream<Document> documents = plan.entries == null ? plan.positions.distinct().map(this::getDocument).filter(Objects::nonNull)
                : plan.index.covers(query, fieldSelector) ? plan.entries.map(entry -> {
                    Document keys = plan.index.documentOf(entry);
                    return keys != null ? keys : getDocument(entry.position);
                }).filter(Objects::nonNull)
                : plan.entries.map(entry -> entry.position).distinct().map(this::getDocument).filter(Objects::nonNull);
            Document matched = plan.byId ? withoutIdsFound(query) : query;
            if (plan.ordered) {
                return matchDocumentsFromStream(matched, documents, numberToSkip, limit, batchSize, null, fieldSelector);
            }
            return matchDocumentsFromStream(documents, matched, orderBy, numberToSkip, limit, batchSize, fieldSelector);
        }

        /**
         * The query less an `_id: {$in: [...]}` of strings and ObjectIds that the `_id` lookups have
         * answered: a document found by them has one of those ids, so matching it again is redundant,
         * and the library's `$in` walks its whole list for each document (a change feed's
         * acknowledgement of 8,000 changes at once made 32 million comparisons).
         */
        private static Document withoutIdsFound(Document query) {
            // An `_id` condition inside `$and` may be the one the lookups were made from: leave such a query whole.
            if (query.containsKey("$and")) return query;
            Object id = query.get("_id");
            if (!(id instanceof Document) || ((Document) id).size() != 1) return query;
            Object in = ((Document) id).get("$in");
            if (!(in instanceof Collection)) return query;
            for (Object value : (Collection<?>) in) if (!(value instanceof String) && !(value instanceof ObjectId)) return query;
            Document rest = query.clone();
            rest.remove("_id");
            return rest;
        }

        private static boolean isNatural(Document orderBy) {
            return orderBy != null && orderBy.keySet().stream().anyMatch(key -> key.startsWith("$"));
        }

        private Plan plan(Document query, Document orderBy) {
            Map<String, Condition> conditions = Condition.of(query);
            boolean sorted = orderBy != null && !orderBy.isEmpty();
            if (conditions.isEmpty() && !sorted) return null;
            Plan best = null;
            for (Index<Object> index : getIndexes()) {
                Plan plan = index instanceof SecondaryIndex ? planScan((SecondaryIndex) index, conditions, orderBy)
                    : index.isUnique() ? planLookup(index, conditions) : null;
                if (plan != null && (best == null || plan.score > best.score)) best = plan;
            }
            return best;
        }

        /** Point lookups on a unique index, when the query fixes each of its keys (one of them may be an `$in`). */
        private Plan planLookup(Index<Object> index, Map<String, Condition> conditions) {
            List<IndexKey> keys = index.getKeys();
            boolean sparse = Utils.isTrue(index.toIndexDescription().get("sparse"));
            List<Document> probes = new ArrayList<>();
            probes.add(new Document());
            for (IndexKey key : keys) {
                Condition condition = conditions.get(key.getKey());
                List<Object> points = condition == null ? null : condition.points();
                if (points == null || (points.size() > 1 && probes.size() > 1)) return null;
                List<Document> next = new ArrayList<>();
                for (Document probe : probes) {
                    for (Object point : points) {
                        if (sparse && Missing.isNullOrMissing(point)) return null; // a sparse index does not hold the documents without the key
                        Document copy = probe.clone();
                        Utils.changeSubdocumentValue(copy, key.getKey(), Missing.isNullOrMissing(point) ? null : point);
                        next.add(copy);
                    }
                }
                probes = next;
            }
            Plan plan = new Plan();
            plan.score = 1000 + keys.size();
            plan.byId = index instanceof IdIndex;
            List<Object> positions = new ArrayList<>();
            for (Document probe : probes) {
                Object position = index.getPosition(probe);
                if (position != null) positions.add(position);
            }
            plan.positions = positions.stream();
            return plan;
        }

        /** A scan of a secondary index: equality prefix, then a range on the next key; ordered when that is the sort. */
        private Plan planScan(SecondaryIndex index, Map<String, Condition> conditions, Document orderBy) {
            if (!index.isBuilt()) buildSecondaryIndexes(); // only while the startup build has not reached this collection
            if (!index.usable()) return null;
            List<IndexKey> keys = index.getKeys();
            int n = keys.size();
            List<List<Object>> prefix = new ArrayList<>();
            // Several `$in`s make as many scans as the product of their sizes (bounded, as MongoDB bounds it).
            long scansNeeded = 1;
            for (IndexKey key : keys) {
                Condition condition = conditions.get(key.getKey());
                List<Object> points = condition == null ? null : condition.points();
                if (points == null || scansNeeded * points.size() > MAX_SCANS) break;
                scansNeeded *= points.size();
                prefix.add(points);
            }
            int equal = prefix.size();
            Condition rangeCondition = equal < n ? conditions.get(keys.get(equal).getKey()) : null;
            boolean range = rangeCondition != null && rangeCondition.isRange();

            // Served sort: the sort's keys, less those fixed by the query, are the keys after the prefix.
            Boolean reverse = null;
            // Several scans are merged in the sort's order when they are few enough (MongoDB's "explode for sort").
            boolean ordered = scansNeeded <= MAX_MERGED_SCANS && !index.isMultikey();
            if (orderBy != null && !orderBy.isEmpty() && ordered) {
                int position = equal;
                for (Map.Entry<String, Object> sortKey : orderBy.entrySet()) {
                    Condition fixed = conditions.get(sortKey.getKey());
                    if (fixed != null && fixed.isEquality()) continue;
                    if (position >= n || !keys.get(position).getKey().equals(sortKey.getKey())) {
                        ordered = false;
                        break;
                    }
                    if (!(sortKey.getValue() instanceof Number)) {
                        ordered = false; // { $meta: ... }
                        break;
                    }
                    boolean wantAscending = ((Number) sortKey.getValue()).intValue() > 0;
                    boolean flip = wantAscending != index.isAscending(position);
                    if (reverse != null && reverse != flip) {
                        ordered = false;
                        break;
                    }
                    reverse = flip;
                    position++;
                }
            }
            boolean servesSort = ordered && orderBy != null && !orderBy.isEmpty();
            if (equal == 0 && !range && !servesSort) return null;

            Plan plan = new Plan();
            plan.score = equal * 10 + (range ? 5 : 0) + (servesSort ? 3 : 0);
            plan.ordered = ordered;
            boolean backwards = reverse != null && reverse;
            List<Object[]> starts = new ArrayList<>();
            starts.add(new Object[0]);
            for (List<Object> points : prefix) {
                List<Object[]> next = new ArrayList<>();
                for (Object[] start : starts) {
                    for (Object point : points) {
                        Object[] longer = Arrays.copyOf(start, start.length + 1);
                        longer[start.length] = Missing.isNullOrMissing(point) ? null : index.shared(start.length, point);
                        next.add(longer);
                    }
                }
                starts = next;
            }
            List<Object[]> froms = new ArrayList<>();
            List<Object[]> tos = new ArrayList<>();
            for (Object[] start : starts) {
                Object[] from = Arrays.copyOf(start, n);
                Object[] to = Arrays.copyOf(start, n);
                for (int i = equal; i < n; i++) {
                    from[i] = SecondaryIndex.LOW;
                    to[i] = SecondaryIndex.HIGH;
                }
                if (range) {
                    Object lower = rangeCondition.lower == Condition.HAS_NO_VALUE ? null : rangeCondition.lower;
                    Object upper = rangeCondition.upper == Condition.HAS_NO_VALUE ? null : rangeCondition.upper;
                    boolean asc = index.isAscending(equal);
                    Object first = asc ? lower : upper;
                    Object last = asc ? upper : lower;
                    if (first != null) from[equal] = first;
                    if (last != null) to[equal] = last;
                }
                froms.add(from);
                tos.add(to);
            }
            plan.index = index;
            if (servesSort && starts.size() > 1) {
                plan.entries = index.mergedScan(froms, tos, backwards, equal);
            } else {
                List<Stream<SecondaryIndex.Entry>> scans = new ArrayList<>();
                for (int i = 0; i < froms.size(); i++) scans.add(index.scan(froms.get(i), tos.get(i), backwards));
                plan.entries = scans.stream().flatMap(s -> s);
            }
            return plan;
        }
    }

    /**
     * The startup build of the secondary indexes (kept in memory, SecondaryIndex): once the engine
     * listens, one background thread fills every collection's indexes, smallest collections first,
     * each in one pass under that collection's lock. The engine answers at once; a query that reaches
     * a collection before the build does waits for that collection's build only (its writes too).
     * Then no query builds anything (engines/README.md: what a restart costs).
     */
    static final class IndexBuilder {
        private static volatile boolean serving = false;

        /** The engine answers requests: an index declared from now on is built when declared. */
        static boolean serving() {
            return serving;
        }

        static void start(H2Backend backend, MVStore store) {
            serving = true;
            Thread thread = new Thread(() -> buildAll(backend, store), "mongo-launcher-index-build");
            thread.setDaemon(true);
            thread.start();
        }

        private static void buildAll(H2Backend backend, MVStore store) {
            long started = System.nanoTime();
            List<IndexedCollection> collections = new ArrayList<>();
            String prefix = "databases.";
            for (String map : store.getMapNames()) {
                if (!map.startsWith(prefix)) continue;
                String fullName = map.substring(prefix.length());
                int dot = fullName.indexOf('.');
                if (dot < 0) continue;
                try {
                    MongoDatabase database = backend.resolveDatabase(fullName.substring(0, dot));
                    MongoCollection<?> collection = database.resolveCollection(fullName.substring(dot + 1), false);
                    if (collection instanceof IndexedCollection) collections.add((IndexedCollection) collection);
                } catch (RuntimeException e) {
                    // a collection dropped meanwhile: nothing to build
                }
            }
            collections.sort(Comparator.comparingInt(IndexedCollection::count));
            long documents = 0;
            for (IndexedCollection collection : collections) {
                try {
                    documents += collection.buildSecondaryIndexes();
                } catch (RuntimeException e) {
                    System.err.println("mongo-launcher: index build of " + collection.getFullName() + " failed: " + e);
                }
            }
            System.out.println("mongo-launcher: indexes built (" + collections.size() + " collections, " + documents + " documents read) in "
                + (System.nanoTime() - started) / 1_000_000 + " ms");
            System.out.flush();
        }
    }

    /**
     * The value type of every collection's documents. H2's default, ObjectDataType, stores a
     * Document by Java serialization: reading one back (every page outside MVStore's cache) cost
     * about 0.6 ms of engine CPU per document, the bound of an uncached crawl (bench/RESULTS.md).
     * This type stores BSON (one marker byte, then the document as the wire carries it), which the
     * server's own codec reads and writes far faster. Values written before (Java-serialized, first
     * byte one of ObjectDataType's tags, all below the marker) are still read by ObjectDataType, so
     * an existing data file needs no conversion: each document moves to BSON at its next write.
     * A value BSON cannot carry (none the wire protocol delivers) keeps the old form.
     */
    /**
     * BSON written to and read from plain byte arrays. The library's codec (BsonEncoder,
     * BsonDecoder) goes through a netty ByteBuf a byte at a time, each access checking the buffer's
     * reference count and bounds, and encodes every array as a Document keyed "0", "1", … first:
     * an uncached page of 100 entries spent about 40 % of the engine's CPU encoding its answer and a
     * quarter decoding the stored documents it read (JFR, engines/README.md "How documents are
     * stored"). Same types, same bytes and the same refusals as the library's codec: a value it
     * cannot encode throws the same IllegalArgumentException.
     */
    static final class ArrayBson {
        private ArrayBson() {
        }

        /** A growing byte array, kept by its owner between documents. */
        static final class Writer {
            private static final int KEPT = 1 << 20;
            byte[] bytes = new byte[512];
            int size;

            void reset() {
                if (bytes.length > KEPT) bytes = new byte[512];
                size = 0;
            }

            private void room(int more) {
                if (size + more > bytes.length) bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + more));
            }

            void put(byte b) {
                room(1);
                bytes[size++] = b;
            }

            void putInt(int v) {
                room(4);
                intAt(size, v);
                size += 4;
            }

            void intAt(int at, int v) {
                bytes[at] = (byte) v;
                bytes[at + 1] = (byte) (v >>> 8);
                bytes[at + 2] = (byte) (v >>> 16);
                bytes[at + 3] = (byte) (v >>> 24);
            }

            void putLong(long v) {
                putInt((int) v);
                putInt((int) (v >>> 32));
            }

            void putLongBigEndian(long v) {
                room(8);
                for (int shift = 56; shift >= 0; shift -= 8) bytes[size++] = (byte) (v >>> shift);
            }

            void put(byte[] data) {
                room(data.length);
                System.arraycopy(data, 0, bytes, size, data.length);
                size += data.length;
            }

            /** UTF-8 as String.getBytes writes it; most keys and values are ASCII and copied as they are. */
            void putUtf8(String text) {
                int length = text.length();
                room(length);
                for (int i = 0; i < length; i++) {
                    char c = text.charAt(i);
                    if (c >= 0x80) {
                        put(text.substring(i).getBytes(StandardCharsets.UTF_8));
                        return;
                    }
                    bytes[size++] = (byte) c;
                }
            }
        }

        static void encodeDocument(Map<String, ?> document, Writer out) {
            int start = out.size;
            out.putInt(0);
            for (Map.Entry<String, ?> field : document.entrySet()) encodeField(field.getKey(), field.getValue(), out);
            out.put(BsonConstants.TERMINATING_BYTE);
            out.intAt(start, out.size - start);
        }

        private static void encodeField(String key, Object value, Writer out) {
            byte type = BsonEncoder.determineType(value);
            out.put(type);
            out.putUtf8(key);
            out.put(BsonConstants.STRING_TERMINATION);
            encodeValue(type, value, out);
        }

        private static void encodeString(String text, Writer out) {
            int start = out.size;
            out.putInt(0);
            out.putUtf8(text);
            out.put(BsonConstants.STRING_TERMINATION);
            out.intAt(start, out.size - start - 4);
        }

        private static void encodeValue(byte type, Object value, Writer out) {
            switch (type) {
                case BsonConstants.TYPE_DOUBLE -> out.putLong(Double.doubleToRawLongBits((Double) value));
                case BsonConstants.TYPE_UTF8_STRING -> encodeString(value.toString(), out);
                case BsonConstants.TYPE_EMBEDDED_DOCUMENT -> {
                    @SuppressWarnings("unchecked")
                    Map<String, ?> map = (Map<String, ?>) value;
                    encodeDocument(map, out);
                }
                case BsonConstants.TYPE_ARRAY -> {
                    int start = out.size;
                    out.putInt(0);
                    int i = 0;
                    for (Object item : (Collection<?>) value) encodeField(Integer.toString(i++), item, out);
                    out.put(BsonConstants.TERMINATING_BYTE);
                    out.intAt(start, out.size - start);
                }
                case BsonConstants.TYPE_DATA -> {
                    if (value instanceof BinData binary) {
                        byte[] data = binary.getData();
                        out.putInt(data.length);
                        out.put(BsonConstants.BINARY_SUBTYPE_GENERIC);
                        out.put(data);
                    } else if (value instanceof LegacyUUID legacy) {
                        out.putInt(BsonConstants.LENGTH_UUID);
                        out.put(BsonConstants.BINARY_SUBTYPE_OLD_UUID);
                        out.putLong(legacy.getUuid().getMostSignificantBits());
                        out.putLong(legacy.getUuid().getLeastSignificantBits());
                    } else {
                        UUID uuid = (UUID) value;
                        out.putInt(BsonConstants.LENGTH_UUID);
                        out.put(BsonConstants.BINARY_SUBTYPE_UUID);
                        out.putLongBigEndian(uuid.getMostSignificantBits());
                        out.putLongBigEndian(uuid.getLeastSignificantBits());
                    }
                }
                case BsonConstants.TYPE_OBJECT_ID -> {
                    byte[] id = ((ObjectId) value).toByteArray();
                    if (id.length != BsonConstants.LENGTH_OBJECTID) throw new IllegalArgumentException("Illegal ObjectId: " + value);
                    out.put(id);
                }
                case BsonConstants.TYPE_BOOLEAN -> out.put((Boolean) value ? BsonConstants.BOOLEAN_VALUE_TRUE : BsonConstants.BOOLEAN_VALUE_FALSE);
                case BsonConstants.TYPE_UTC_DATETIME -> out.putLong(((Instant) value).toEpochMilli());
                case BsonConstants.TYPE_REGEX -> {
                    BsonRegularExpression pattern = (BsonRegularExpression) value;
                    out.putUtf8(pattern.getPattern());
                    out.put(BsonConstants.STRING_TERMINATION);
                    out.putUtf8(pattern.getOptions());
                    out.put(BsonConstants.STRING_TERMINATION);
                }
                case BsonConstants.TYPE_INT32 -> out.putInt((Integer) value);
                case BsonConstants.TYPE_TIMESTAMP -> out.putLong(((BsonTimestamp) value).getValue());
                case BsonConstants.TYPE_INT64 -> out.putLong((Long) value);
                case BsonConstants.TYPE_DECIMAL128 -> {
                    out.putLong(((Decimal128) value).getLow());
                    out.putLong(((Decimal128) value).getHigh());
                }
                case BsonConstants.TYPE_MAX_KEY, BsonConstants.TYPE_MIN_KEY, BsonConstants.TYPE_UNDEFINED, BsonConstants.TYPE_NULL -> {
                }
                case BsonConstants.TYPE_JAVASCRIPT_CODE -> encodeString(((BsonJavaScript) value).getCode(), out);
                default -> throw new IllegalArgumentException("unhandled type: " + value.getClass());
            }
        }

        /** Reads one document from `bytes` at `at`; the library's decoder's refusals, same messages. */
        static final class Reader {
            private final byte[] bytes;
            private int at;
            private final int end;

            Reader(byte[] bytes, int at, int end) {
                this.bytes = bytes;
                this.at = at;
                this.end = end;
            }

            private void need(int count) {
                if (end - at < count) throw new IllegalArgumentException("Too few bytes to read: " + (end - at) + ". Expected: " + count);
            }

            private byte readByte() {
                need(1);
                return bytes[at++];
            }

            private int readInt() {
                need(4);
                int v = (bytes[at] & 0xff) | (bytes[at + 1] & 0xff) << 8 | (bytes[at + 2] & 0xff) << 16 | (bytes[at + 3] & 0xff) << 24;
                at += 4;
                return v;
            }

            private long readLong() {
                return (readInt() & 0xffffffffL) | ((long) readInt()) << 32;
            }

            private long readLongBigEndian() {
                need(8);
                long v = 0;
                for (int i = 0; i < 8; i++) v = v << 8 | (bytes[at++] & 0xff);
                return v;
            }

            private String readCString() {
                int zero = at;
                while (zero < end && bytes[zero] != BsonConstants.STRING_TERMINATION) zero++;
                if (zero == end) throw new IllegalArgumentException("string termination not found");
                String text = new String(bytes, at, zero - at, StandardCharsets.UTF_8);
                at = zero + 1;
                return text;
            }

            private String readString() {
                int length = readInt();
                need(length);
                String text = new String(bytes, at, length - 1, StandardCharsets.UTF_8);
                at += length - 1;
                byte trail = bytes[at++];
                if (trail != BsonConstants.STRING_TERMINATION) throw new IllegalArgumentException("Unexpected trailing byte: " + trail);
                return text;
            }

            Document readDocument() {
                Document document = new Document();
                readFields(document, null);
                return document;
            }

            /** The fields of one document into `document`, or their values into `array` (an array's keys are its positions). */
            private void readFields(Document document, List<Object> array) {
                int total = readInt();
                int length = total - 4;
                if (end - at < length) throw new IllegalArgumentException("Too few bytes to read: " + (end - at) + ". Expected: " + length);
                if (length > BsonConstants.MAX_BSON_OBJECT_SIZE) throw new IllegalArgumentException("BSON object too large: " + length + " bytes");
                int start = at;
                while (at - start < length) {
                    byte type = readByte();
                    if (type == BsonConstants.TERMINATING_BYTE) return;
                    String name = readCString();
                    Object value = readValue(type);
                    if (array != null) array.add(value);
                    else if (document.put(name, value) != null) throw new IllegalArgumentException("Document already contains field '" + name + "'");
                }
                throw new IllegalArgumentException("illegal BSON object. Terminating byte not found. totalObjectLength = " + total);
            }

            private Object readValue(byte type) {
                switch (type) {
                    case BsonConstants.TYPE_DOUBLE: return Double.longBitsToDouble(readLong());
                    case BsonConstants.TYPE_UTF8_STRING: return readString();
                    case BsonConstants.TYPE_EMBEDDED_DOCUMENT: return readDocument();
                    case BsonConstants.TYPE_ARRAY: {
                        List<Object> array = new ArrayList<>();
                        readFields(null, array);
                        return array;
                    }
                    case BsonConstants.TYPE_DATA: return readBinary();
                    case BsonConstants.TYPE_UNDEFINED:
                    case BsonConstants.TYPE_NULL: return null;
                    case BsonConstants.TYPE_OBJECT_ID: {
                        need(BsonConstants.LENGTH_OBJECTID);
                        byte[] id = Arrays.copyOfRange(bytes, at, at + BsonConstants.LENGTH_OBJECTID);
                        at += BsonConstants.LENGTH_OBJECTID;
                        return new ObjectId(id);
                    }
                    case BsonConstants.TYPE_BOOLEAN: {
                        byte value = readByte();
                        if (value == BsonConstants.BOOLEAN_VALUE_FALSE) return Boolean.FALSE;
                        if (value == BsonConstants.BOOLEAN_VALUE_TRUE) return Boolean.TRUE;
                        throw new IllegalArgumentException("Illegal boolean value:" + value);
                    }
                    case BsonConstants.TYPE_UTC_DATETIME: return Instant.ofEpochMilli(readLong());
                    case BsonConstants.TYPE_REGEX: {
                        String regex = readCString();
                        return new BsonRegularExpression(regex, readCString());
                    }
                    case BsonConstants.TYPE_INT32: return readInt();
                    case BsonConstants.TYPE_TIMESTAMP: return new BsonTimestamp(readLong());
                    case BsonConstants.TYPE_INT64: return readLong();
                    case BsonConstants.TYPE_DECIMAL128: {
                        long low = readLong();
                        return new Decimal128(low, readLong());
                    }
                    case BsonConstants.TYPE_MAX_KEY: return MaxKey.getInstance();
                    case BsonConstants.TYPE_MIN_KEY: return MinKey.getInstance();
                    case BsonConstants.TYPE_JAVASCRIPT_CODE: return new BsonJavaScript(readString());
                    case BsonConstants.TYPE_JAVASCRIPT_CODE_WITH_SCOPE: throw new IllegalArgumentException("unhandled type: 0x" + Integer.toHexString(type));
                    default: throw new IllegalArgumentException("unknown type: 0x" + Integer.toHexString(type));
                }
            }

            private Object readBinary() {
                int length = readInt();
                int subtype = readByte();
                switch (subtype) {
                    case BsonConstants.BINARY_SUBTYPE_GENERIC:
                    case BsonConstants.BINARY_SUBTYPE_USER_DEFINED: {
                        need(length);
                        byte[] data = Arrays.copyOfRange(bytes, at, at + length);
                        at += length;
                        return new BinData(data);
                    }
                    case BsonConstants.BINARY_SUBTYPE_OLD_UUID: {
                        if (length != BsonConstants.LENGTH_UUID) throw new IllegalArgumentException("Illegal length: " + length);
                        long most = readLong();
                        return new LegacyUUID(most, readLong());
                    }
                    case BsonConstants.BINARY_SUBTYPE_UUID: {
                        if (length != BsonConstants.LENGTH_UUID) throw new IllegalArgumentException("Illegal length: " + length);
                        long most = readLongBigEndian();
                        return new UUID(most, readLongBigEndian());
                    }
                    default: throw new IllegalArgumentException("Unknown subtype: " + subtype);
                }
            }
        }
    }

    /**
     * The library's OP_MSG encoder with ArrayBson in place of BsonEncoder: the answer's document
     * encoded into an array this channel keeps, then copied into netty's buffer at once.
     */
    static final class ArrayMessageEncoder extends MessageToByteEncoder<MongoMessage> {
        private final ArrayBson.Writer body = new ArrayBson.Writer();

        @Override
        protected void encode(ChannelHandlerContext ctx, MongoMessage message, ByteBuf buf) {
            body.reset();
            try {
                ArrayBson.encodeDocument(message.getDocument(), body);
            } catch (RuntimeException e) {
                ctx.channel().close();
                throw e;
            }
            int header = 4 * 5 + 1;
            buf.ensureWritable(header + body.size);
            buf.writeIntLE(header + body.size);
            buf.writeIntLE(message.getHeader().getRequestID());
            buf.writeIntLE(message.getHeader().getResponseTo());
            buf.writeIntLE(OpCode.OP_MSG.getId());
            buf.writeIntLE(message.getFlags());
            buf.writeByte(MongoMessage.SECTION_KIND_BODY);
            buf.writeBytes(body.bytes, 0, body.size);
        }
    }

    /**
     * The library's request decoder with ArrayBson for OP_MSG (every request of the driver): the
     * frame copied out of netty's buffer once, its documents read from the array. OP_QUERY (the
     * legacy handshake) is left to the library.
     */
    static final class ArrayMessageDecoder extends MongoWireProtocolHandler {
        private static final int HEADER = 4 * 4;

        @Override
        protected ClientRequest decode(ChannelHandlerContext ctx, ByteBuf buf) throws Exception {
            int start = buf.readerIndex();
            if (buf.readableBytes() < HEADER + 4 || buf.getIntLE(start + 12) != OpCode.OP_MSG.getId()) return super.decode(ctx, buf);
            int totalLength = buf.getIntLE(start);
            if (totalLength > MAX_MESSAGE_SIZE_BYTES) throw new IOException("message too large: " + totalLength + " bytes");
            if (buf.readableBytes() < totalLength) return null;
            byte[] frame = new byte[totalLength];
            buf.readBytes(frame);
            ArrayBson.Reader in = new ArrayBson.Reader(frame, 4, totalLength);
            MessageHeader header = new MessageHeader(totalLength, in.readInt(), in.readInt());
            in.readInt();
            int flagBits = in.readInt();
            boolean checksum = MessageFlag.CHECKSUM_PRESENT.isSet(flagBits);
            if (checksum) flagBits = MessageFlag.CHECKSUM_PRESENT.removeFrom(flagBits);
            if (flagBits != 0) throw new UnsupportedOperationException("flags=" + flagBits + " not yet supported");
            int payloadEnd = checksum ? totalLength - 4 : totalLength;
            Document body = null;
            Document sequences = new Document();
            while (in.at < payloadEnd) {
                byte kind = in.readByte();
                if (kind == MongoMessage.SECTION_KIND_BODY) {
                    if (body != null) throw new IllegalArgumentException("Expected null but got " + body);
                    body = in.readDocument();
                } else if (kind == MongoMessage.SECTION_KIND_DOCUMENT_SEQUENCE) {
                    int sectionStart = in.at;
                    int sectionSize = in.readInt();
                    String identifier = in.readCString();
                    List<Document> documents = new ArrayList<>();
                    do documents.add(in.readDocument());
                    while (in.at - sectionStart < sectionSize);
                    if (sequences.put(identifier, documents) != null) throw new IllegalArgumentException("Expected null");
                } else {
                    throw new IllegalArgumentException("Unexpected section kind: " + kind);
                }
            }
            if (checksum) in.readInt();
            if (body == null) throw new IllegalArgumentException("Given value must not be null");
            for (Map.Entry<String, Object> sequence : sequences.entrySet()) {
                if (body.put(sequence.getKey(), sequence.getValue()) != null) throw new IllegalArgumentException("Expected null");
            }
            if (in.at != totalLength) throw new IOException();
            return new MongoMessage(ctx.channel(), header, body);
        }
    }

    /**
     * MongoServer's listener with the launcher's codec in its pipeline (MongoServer builds its
     * pipeline inside `bind`, with no way to put another encoder or decoder in): the same event
     * loops, handlers and shutdown otherwise.
     */
    static final class LocalServer {
        private final MongoBackend backend;
        private EventLoopGroup boss;
        private EventLoopGroup workers;
        private Channel listening;

        LocalServer(MongoBackend backend) {
            this.backend = backend;
        }

        void bind(String host, int port) {
            boss = new NioEventLoopGroup(0, new MongoThreadFactory("mongo-server-boss"));
            workers = new NioEventLoopGroup(0, new MongoThreadFactory("mongo-server-worker"));
            ChannelGroup clients = new DefaultChannelGroup("mongodb-channels", workers.next());
            ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 100)
                .localAddress(new InetSocketAddress(host, port))
                .childOption(ChannelOption.TCP_NODELAY, Boolean.TRUE)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    public void initChannel(SocketChannel channel) {
                        channel.pipeline().addLast(new MongoWireReplyEncoder());
                        channel.pipeline().addLast(new ArrayMessageEncoder());
                        channel.pipeline().addLast(new ArrayMessageDecoder());
                        channel.pipeline().addLast(new MongoDatabaseHandler(backend, clients));
                        channel.pipeline().addLast(new MongoExceptionHandler());
                    }
                });
            try {
                listening = bootstrap.bind().syncUninterruptibly().channel();
            } catch (RuntimeException e) {
                shutdown();
                throw e;
            }
        }

        /** Stops listening, lets the event loops finish (5 s at most), then closes the backend (MVStore.close flushes). */
        void shutdown() {
            if (listening != null) listening.close().syncUninterruptibly();
            for (EventLoopGroup group : new EventLoopGroup[] {boss, workers}) if (group != null) group.shutdownGracefully(0, 5, TimeUnit.SECONDS);
            for (EventLoopGroup group : new EventLoopGroup[] {boss, workers}) if (group != null) group.terminationFuture().syncUninterruptibly();
            backend.close();
        }
    }

    static final class BsonDocumentType extends BasicDataType<Object> {
        private static final byte BSON = (byte) 0xB5;
        private final ObjectDataType legacy = new ObjectDataType();

        @Override
        public Object[] createStorage(int size) {
            return new Object[size];
        }

        @Override
        public int getMemory(Object value) {
            return estimate(value);
        }

        /** A walk, not a serialization (ObjectDataType serializes a value to size it): MVStore's cache only needs the order of magnitude. */
        private static int estimate(Object value) {
            if (value instanceof Map<?, ?> map) {
                int size = 64;
                for (Map.Entry<?, ?> entry : map.entrySet()) size += 48 + 2 * String.valueOf(entry.getKey()).length() + estimate(entry.getValue());
                return size;
            }
            if (value instanceof Collection<?> list) {
                int size = 32;
                for (Object item : list) size += 8 + estimate(item);
                return size;
            }
            if (value instanceof String text) return 40 + 2 * text.length();
            return 24;
        }

        @Override
        public void write(WriteBuffer buffer, Object value) {
            if (value instanceof Document document) {
                ArrayBson.Writer bytes = new ArrayBson.Writer();
                try {
                    ArrayBson.encodeDocument(document, bytes);
                    buffer.put(BSON);
                    buffer.put(bytes.bytes, 0, bytes.size);
                    return;
                } catch (IllegalArgumentException notBson) {
                    // kept in the legacy form below
                }
            }
            legacy.write(buffer, value);
        }

        @Override
        public Object read(java.nio.ByteBuffer buffer) {
            if (buffer.get(buffer.position()) != BSON) return legacy.read(buffer);
            buffer.get();
            int length = buffer.order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(buffer.position());
            buffer.order(java.nio.ByteOrder.BIG_ENDIAN);
            Document document;
            if (buffer.hasArray()) {
                int at = buffer.arrayOffset() + buffer.position();
                document = new ArrayBson.Reader(buffer.array(), at, at + length).readDocument();
            } else {
                byte[] copy = new byte[length];
                buffer.get(buffer.position(), copy);
                document = new ArrayBson.Reader(copy, 0, length).readDocument();
            }
            buffer.position(buffer.position() + length);
            return document;
        }
    }

    /** H2Database whose unique indexes use RememberedKeyOrder (same map names as H2Database gives them). */
    static final class RememberedOrderDatabase extends H2Database {
        /** `--values legacy`: documents stored as H2's default did (Java serialization), for the benchmark's baseline (bench/engine-documents.mjs). */
        static boolean legacyValues = false;
        private static final BsonDocumentType BSON_DOCUMENTS = new BsonDocumentType();
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

        /** H2Database's collection (same maps), planning its queries over all its indexes. */
        @Override
        protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
            try {
                MVStore store = (MVStore) STORE.get(this);
                String fullName = getFullCollectionNamespace(collectionName);
                MVMap<Object, Document> data = legacyValues
                    ? store.openMap("databases." + fullName)
                    : store.openMap("databases." + fullName, dataMapOf());
                MVMap<String, Object> meta = store.openMap("meta." + fullName);
                return new IndexedCollection(this, collectionName, options, data, meta, cursorRegistry);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot open collection " + collectionName, e);
            }
        }

        /**
         * A collection's data map: documents stored as BSON, and `_id` keys written from their remembered
         * bytes (RememberedKeyOrder.write: the same order and bytes as H2's default key type).
         */
        private static MVMap.Builder<Object, Document> dataMapOf() {
            return new MVMap.Builder<Object, Document>().keyType(new RememberedKeyOrder()).valueType(BSON_DOCUMENTS);
        }

        /** Every index the service declares is kept (built after the start or when declared), except the kinds with no field order (text, wildcard). */
        @Override
        protected Index<Object> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            boolean plain = !collectionName.startsWith("system.") && keys.stream().noneMatch(key -> key.getKey().contains("$"));
            return plain ? new SecondaryIndex(indexName, keys, sparse) : super.openOrCreateSecondaryIndex(collectionName, indexName, keys, sparse);
        }

        @Override
        protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            try {
                // Read by reflection: H2Database's constructor opens the indexes before this class's fields exist.
                MVStore store = (MVStore) STORE.get(this);
                MVMap<KeyValue, Object> map = store.openMap(getFullCollectionNamespace(collectionName) + "._index_" + indexName,
                    new MVMap.Builder<KeyValue, Object>().keyType(new RememberedKeyOrder()));
                boolean id = keys.size() == 1 && "_id".equals(keys.get(0).getKey()) && !legacyValues;
                return id ? new IdIndex(map, indexName, keys, sparse) : UNIQUE_INDEX.newInstance(map, indexName, keys, sparse);
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

        /**
         * `listDatabases` opens and reads every database: one that another client drops meanwhile
         * has its maps closed (or its collections half made), and the listing failed ("Map … is
         * closed") where real MongoDB answers without it. It only reads, so it is asked again.
         */
        @Override
        public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
            for (int attempt = 1; ; attempt++) {
                try {
                    return super.handleCommand(channel, databaseName, command, query);
                } catch (RuntimeException e) {
                    if (attempt >= 10 || !"listdatabases".equalsIgnoreCase(command)) throw e;
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Launcher <port> <h2-file> [--host 127.0.0.1] [--version 4.4.0] [--no-oplog] [--values bson|legacy] [--retention-ms N]");
            System.exit(2);
        }
        int port = Integer.parseInt(args[0]);
        String file = new File(args[1]).getAbsolutePath();
        String host = "127.0.0.1";
        String version = "4.4.0";
        boolean oplog = true;
        // H2's retention of freed chunks (45 s by default); 0 shows the chunk check of engines/README.md in seconds.
        Integer retentionMs = null;
        List<String> rest = Arrays.asList(args).subList(2, args.length);
        for (int i = 0; i < rest.size(); i++) {
            switch (rest.get(i)) {
                case "--host": host = rest.get(++i); break;
                case "--version": version = rest.get(++i); break;
                case "--no-oplog": oplog = false; break;
                case "--values": RememberedOrderDatabase.legacyValues = "legacy".equals(rest.get(++i)); break;
                case "--retention-ms": retentionMs = Integer.parseInt(rest.get(++i)); break;
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
        if (retentionMs != null) backend.getMvStore().setRetentionTime(retentionMs);
        ReportedVersion reported = new ReportedVersion(version);
        backend.version(reported);
        if (oplog) {
            backend.enableOplog();
        }
        LocalServer server = new LocalServer(backend);

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("mongo-launcher: shutting down");
            try {
                server.shutdown();
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
        IndexBuilder.start(backend, backend.getMvStore());

        // Keep the main thread alive until shutdown (netty threads are non-daemon anyway).
        stopped.await();
    }
}
