/*
 * Smoke test for FoundationDB's official Java binding (7.3) running on a libfdb_c.so — here
 * cfdb's. Uses only the binding's public API: FDB.selectAPIVersion(730), FDB.open(clusterFile),
 * Database/Transaction/ReadTransaction, KeySelector, Range, StreamingMode, MutationType, the
 * option classes, FDBException, Tuple/Versionstamp, Subspace, DirectoryLayer, LocalityUtil and
 * AsyncUtil. Every check prints one line (PASS/FAIL/SKIP); failures are collected and listed at
 * the end, and the exit status is 1 if any check failed (3 if stopping the network hangs).
 *
 *   java -cp fdb-java.jar:. JavaSmoke --cluster-file FILE [--only TEXT] [--verbose]
 *
 * The binding's jar (with libfdb_java.so inside, or FDB_LIBRARY_PATH_FDB_JAVA) must be on the
 * class path and cfdb's libfdb_c.so on LD_LIBRARY_PATH; scripts/check-java-binding.sh sets all of
 * that up. Keys used: "javasmoke/...", the tuple subspace ("javasmoke", ...) and the directory
 * ("javasmoke", ...) — meant for a scratch cluster.
 */

import com.apple.foundationdb.ApiVersion;
import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDB;
import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.LocalityUtil;
import com.apple.foundationdb.MappedKeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.Tenant;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncIterator;
import com.apple.foundationdb.async.AsyncUtil;
import com.apple.foundationdb.async.CloseableAsyncIterator;
import com.apple.foundationdb.directory.DirectoryAlreadyExistsException;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectoryMoveException;
import com.apple.foundationdb.directory.DirectorySubspace;
import com.apple.foundationdb.directory.MismatchedLayerException;
import com.apple.foundationdb.directory.NoSuchDirectoryException;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

public class JavaSmoke {
	interface Check {
		String run(Database db) throws Exception;
	}

	interface Body {
		void run() throws Exception;
	}

	static final class Entry {
		final String name;
		final Check fn;
		final int timeout;

		Entry(String name, int timeout, Check fn) {
			this.name = name;
			this.fn = fn;
			this.timeout = timeout;
		}
	}

	static final String PREFIX = "javasmoke/";
	static final List<Entry> CHECKS = new ArrayList<>();
	static boolean verbose = false;
	static FDB fdb;

	static void check(String name, Check fn) {
		CHECKS.add(new Entry(name, 60, fn));
	}

	static void check(String name, int timeout, Check fn) {
		CHECKS.add(new Entry(name, timeout, fn));
	}

	// ---------------------------------------------------------------------------------------------
	// helpers

	static byte[] b(String s) {
		return s.getBytes(StandardCharsets.UTF_8);
	}

	static byte[] k(Object... parts) {
		StringBuilder sb = new StringBuilder(PREFIX);
		for (int i = 0; i < parts.length; i++) {
			if (i > 0)
				sb.append('/');
			sb.append(parts[i]);
		}
		return b(sb.toString());
	}

	static byte[] cat(byte[]... parts) {
		int n = 0;
		for (byte[] p : parts)
			n += p.length;
		ByteBuffer buf = ByteBuffer.allocate(n);
		for (byte[] p : parts)
			buf.put(p);
		return buf.array();
	}

	static byte[] i64(long v) {
		return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
	}

	static long fromI64(byte[] v) {
		return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong();
	}

	static String p(byte[] v) {
		return v == null ? "null" : "'" + ByteArrayUtil.printable(v) + "'";
	}

	static List<String> keys(List<KeyValue> kvs) {
		return kvs.stream().map(kv -> p(kv.getKey())).collect(Collectors.toList());
	}

	static List<String> ps(List<byte[]> list) {
		return list.stream().map(JavaSmoke::p).collect(Collectors.toList());
	}

	static <T> List<T> reversed(List<T> l) {
		List<T> r = new ArrayList<>(l);
		Collections.reverse(r);
		return r;
	}

	static void expect(boolean cond, String msg) {
		if (!cond)
			throw new AssertionError(msg);
	}

	static void expectEq(Object got, Object want, String what) {
		if (got instanceof byte[])
			got = p((byte[]) got);
		if (want instanceof byte[])
			want = p((byte[]) want);
		if (got == null ? want != null : !got.equals(want))
			throw new AssertionError(what + ": got " + got + ", want " + want);
	}

	/** The FDBException under CompletionException/ExecutionException wrappers, or null. */
	static FDBException asFdb(Throwable t) {
		while (t != null) {
			if (t instanceof FDBException)
				return (FDBException) t;
			if (t instanceof CompletionException || t instanceof ExecutionException)
				t = t.getCause();
			else
				return null;
		}
		return null;
	}

	static Throwable unwrap(Throwable t) {
		while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null)
			t = t.getCause();
		return t;
	}

	/** body must fail with FDBException(code), possibly wrapped. */
	static void expectError(int code, String what, Body body) {
		try {
			body.run();
		} catch (Throwable t) {
			FDBException e = asFdb(t);
			if (e == null)
				throw new AssertionError(what + ": got " + unwrap(t) + ", want FDBException " + code);
			if (e.getCode() != code)
				throw new AssertionError(what + ": got FDBException " + e.getCode() + " (" + e.getMessage() + "), want " + code);
			return;
		}
		throw new AssertionError(what + ": no error, want FDBException " + code);
	}

	/** body must fail with an exception of class c, possibly wrapped. */
	static void expectThrows(Class<? extends Throwable> c, String what, Body body) {
		try {
			body.run();
		} catch (Throwable t) {
			Throwable u = unwrap(t);
			if (!c.isInstance(u))
				throw new AssertionError(what + ": got " + u + ", want " + c.getSimpleName());
			return;
		}
		throw new AssertionError(what + ": no exception, want " + c.getSimpleName());
	}

	/** Runs every part; one AssertionError lists each part that failed. */
	static void allOf(Map<String, Body> parts) {
		List<String> errors = new ArrayList<>();
		for (Map.Entry<String, Body> e : parts.entrySet()) {
			try {
				e.getValue().run();
			} catch (Throwable t) {
				FDBException f = asFdb(t);
				errors.add(e.getKey() + ": " + (f != null ? "FDBException " + f.getCode() + " (" + f.getMessage() + ")" : unwrap(t).toString()));
			}
		}
		if (!errors.isEmpty())
			throw new AssertionError(String.join(" | ", errors));
	}

	static void put(Database db, byte[] key, byte[] value) {
		db.run(tr -> {
			tr.set(key, value);
			return null;
		});
	}

	static byte[] get(Database db, byte[] key) {
		return db.read(tr -> tr.get(key).join());
	}

	static void clearPrefix(Database db, byte[] prefix) {
		db.run(tr -> {
			tr.clear(Range.startsWith(prefix));
			return null;
		});
	}

	static void writeMany(Database db, List<byte[]> keys, Function<Integer, byte[]> value) {
		for (int i = 0; i < keys.size(); i += 500) {
			final int from = i;
			db.run(tr -> {
				for (int j = from; j < Math.min(keys.size(), from + 500); j++)
					tr.set(keys.get(j), value.apply(j));
				return null;
			});
		}
	}

	static void sleep(long ms) {
		try {
			Thread.sleep(ms);
		} catch (InterruptedException e) {
			throw new RuntimeException(e);
		}
	}

	static FDBException fdbErr(int code) {
		return new FDBException("smoke", code);
	}

	// ---------------------------------------------------------------------------------------------
	// checks

	@SuppressWarnings("deprecation") // clearRangeStartsWith, setTransactionIncludePortInAddress: still in the API
	static void registerChecks() {
		check("library_and_api_version", db -> {
			expectEq(fdb.getAPIVersion(), 730, "fdb.getAPIVersion()");
			expectEq(ApiVersion.LATEST, 730, "ApiVersion.LATEST");
			expect(FDB.isAPIVersionSelected(), "FDB.isAPIVersionSelected()");
			expect(FDB.instance() == fdb, "FDB.instance() is the selected instance");
			TreeSet<String> libs = new TreeSet<>();
			boolean jni = false;
			for (String line : Files.readAllLines(Paths.get("/proc/self/maps"))) {
				String[] f = line.trim().split("\\s+", 6);
				if (f.length < 6)
					continue;
				if (Pattern.compile("lib(fdb_c|cfdb)\\.so").matcher(f[5]).find())
					libs.add(f[5]);
				if (f[5].contains("fdb_java"))
					jni = true;
			}
			expect(libs.size() == 1, "exactly one fdb_c library mapped: " + libs);
			expect(jni, "libfdb_java mapped");
			return "library " + libs.first();
		});

		check("get_set_clear", db -> {
			byte[] key = k("gsc", 1), key2 = k("gsc", 2), bin = cat(k("gsc", ""), new byte[] { 0, (byte) 0xff, 0 });
			long cv;
			try (Transaction tr = db.createTransaction()) {
				tr.set(key, b("value"));
				tr.set(key2, b("v2"));
				tr.set(bin, new byte[0]);
				expectEq(tr.get(key).join(), b("value"), "read own write");
				tr.commit().join();
				cv = tr.getCommittedVersion();
			}
			expect(cv > 0, "committed version > 0: " + cv);
			expectEq(get(db, key), b("value"), "db.read get");
			expectEq(get(db, key2), b("v2"), "second key");
			expectEq(get(db, bin), new byte[0], "empty value under a binary key");
			expectEq(get(db, k("gsc", "missing")), null, "missing key -> null");
			db.run(tr -> {
				tr.clear(key);
				expectEq(tr.get(key).join(), null, "cleared in the transaction (RYW)");
				return null;
			});
			expectEq(get(db, key), null, "after clear");
			expectEq(get(db, key2), b("v2"), "other key kept");
			Integer n = db.run(tr -> {
				tr.set(key, b("again"));
				return 42;
			});
			expectEq(n, 42, "db.run return value");
			expectEq(db.readAsync(tr -> tr.get(key)).join(), b("again"), "db.readAsync");
			expectEq(db.runAsync(tr -> {
				tr.set(key2, b("async"));
				return tr.get(key2);
			}).join(), b("async"), "db.runAsync");
			expectEq(get(db, key2), b("async"), "runAsync committed");
			return null;
		});

		check("clear_range", db -> {
			List<byte[]> ks = new ArrayList<>();
			for (int i = 0; i < 10; i++)
				ks.add(k("cr", String.format("%02d", i)));
			writeMany(db, ks, i -> b("v"));
			byte[] end = k("cr", "99");
			try (Transaction tr = db.createTransaction()) {
				tr.clear(ks.get(3), ks.get(6));
				expectEq(tr.getRange(ks.get(0), end).asList().join().size(), 7, "clear(begin, end) in transaction (RYW)");
				tr.commit().join();
			}
			List<String> want = ps(ks.subList(0, 3));
			want.addAll(ps(ks.subList(6, 10)));
			expectEq(keys(db.read(tr -> tr.getRange(ks.get(0), end).asList().join())), want, "after clear(begin, end)");
			db.run(tr -> {
				tr.clear(new Range(ks.get(0), ks.get(2)));
				return null;
			});
			expectEq(db.read(tr -> tr.getRange(ks.get(0), end).asList().join()).size(), 5, "clear(Range)");
			db.run(tr -> {
				tr.clearRangeStartsWith(k("cr", ""));
				return null;
			});
			expectEq(db.read(tr -> tr.getRange(Range.startsWith(k("cr", ""))).asList().join()).size(), 0, "clearRangeStartsWith");
			return null;
		});

		check("get_range", db -> {
			List<byte[]> ks = new ArrayList<>();
			for (int i = 0; i < 50; i++)
				ks.add(k("gr", String.format("%03d", i)));
			writeMany(db, ks, i -> b("v" + i));
			byte[] b = ks.get(0), e = k("gr", "999");
			List<String> all = ps(ks);
			try (Transaction tr = db.createTransaction()) {
				List<KeyValue> kvs = tr.getRange(b, e).asList().join();
				expectEq(keys(kvs), all, "full range keys");
				expectEq(kvs.get(7).getValue(), b("v7"), "value");
				expectEq(keys(tr.getRange(b, e, 10).asList().join()), all.subList(0, 10), "limit 10");
				expectEq(keys(tr.getRange(b, e, ReadTransaction.ROW_LIMIT_UNLIMITED, true).asList().join()), reversed(all), "reverse");
				expectEq(keys(tr.getRange(b, e, 7, true).asList().join()), reversed(all).subList(0, 7), "reverse limit 7");
				for (StreamingMode mode : new StreamingMode[] { StreamingMode.WANT_ALL, StreamingMode.ITERATOR, StreamingMode.SMALL,
						StreamingMode.MEDIUM, StreamingMode.LARGE, StreamingMode.SERIAL }) {
					expectEq(keys(tr.getRange(b, e, 0, false, mode).asList().join()), all, "mode " + mode);
					expectEq(keys(tr.getRange(b, e, 13, true, mode).asList().join()), reversed(all).subList(0, 13), "mode " + mode + " reverse limit 13");
					// the iterator interface (batches fetched as needed)
					List<String> got = new ArrayList<>();
					AsyncIterator<KeyValue> it = tr.getRange(b, e, 0, false, mode).iterator();
					while (it.hasNext())
						got.add(p(it.next().getKey()));
					expectEq(got, all, "iterator in mode " + mode);
				}
				expectEq(keys(tr.getRange(b, e, 20, false, StreamingMode.EXACT).asList().join()), all.subList(0, 20), "mode EXACT limit 20");
				expectError(2210, "mode EXACT without a limit (exact_mode_without_limits)",
						() -> tr.getRange(b, e, 0, false, StreamingMode.EXACT).asList().join());
				expectEq(keys(tr.getRange(new Range(b, e)).asList().join()), all, "getRange(Range)");
				expectEq(keys(tr.getRange(Range.startsWith(k("gr", "00"))).asList().join()), all.subList(0, 10), "Range.startsWith");
				expectEq(tr.getRange(e, b).asList().join().size(), 0, "inverted range is empty");

				Function<KeySelector[], List<String>> sel = s -> keys(tr.getRange(s[0], s[1]).asList().join());
				expectEq(sel.apply(new KeySelector[] { KeySelector.firstGreaterThan(ks.get(5)), KeySelector.firstGreaterOrEqual(ks.get(10)) }),
						all.subList(6, 10), "fgt..fge");
				expectEq(sel.apply(new KeySelector[] { KeySelector.lastLessOrEqual(ks.get(5)), KeySelector.lastLessThan(ks.get(10)) }),
						all.subList(5, 9), "lle..llt");
				expectEq(sel.apply(new KeySelector[] { KeySelector.firstGreaterOrEqual(ks.get(5)).add(2), KeySelector.firstGreaterOrEqual(ks.get(5)).add(5) }),
						all.subList(7, 10), "+offset");
				expectEq(sel.apply(new KeySelector[] { KeySelector.lastLessThan(ks.get(20)).add(-3), KeySelector.firstGreaterOrEqual(ks.get(20)) }),
						all.subList(16, 20), "-offset");
				expectEq(keys(tr.getRange(KeySelector.firstGreaterOrEqual(b), KeySelector.firstGreaterOrEqual(e), 5, true).asList().join()),
						reversed(all).subList(0, 5), "selectors, reverse, limit");

				Function<KeySelector, byte[]> gk = s -> tr.getKey(s).join();
				expectEq(gk.apply(KeySelector.firstGreaterOrEqual(ks.get(3))), ks.get(3), "getKey fge");
				expectEq(gk.apply(KeySelector.firstGreaterThan(ks.get(3))), ks.get(4), "getKey fgt");
				expectEq(gk.apply(KeySelector.lastLessThan(ks.get(3))), ks.get(2), "getKey llt");
				expectEq(gk.apply(KeySelector.lastLessOrEqual(ks.get(3))), ks.get(3), "getKey lle");
				expectEq(gk.apply(KeySelector.firstGreaterOrEqual(ks.get(3)).add(5)), ks.get(8), "getKey fge+5");
				expectEq(gk.apply(KeySelector.firstGreaterOrEqual(k("gr", "0055"))), ks.get(6), "getKey between keys");
				expectEq(gk.apply(KeySelector.lastLessThan(new byte[0])), new byte[0], "getKey before the first key");
				expectEq(gk.apply(KeySelector.firstGreaterOrEqual(new byte[] { (byte) 0xff })), new byte[] { (byte) 0xff }, "getKey past the last user key");
				expectEq(gk.apply(KeySelector.firstGreaterOrEqual(ks.get(49)).add(100000)), new byte[] { (byte) 0xff }, "getKey offset past the end");

				// read-your-writes merged into ranges and selectors
				tr.set(k("gr", "005a"), b("new"));
				tr.clear(ks.get(6));
				tr.clear(ks.get(40), ks.get(45));
				expectEq(keys(tr.getRange(ks.get(4), ks.get(8)).asList().join()),
						Arrays.asList(p(ks.get(4)), p(ks.get(5)), p(k("gr", "005a")), p(ks.get(7))), "RYW range merge");
				expectEq(tr.getRange(b, e).asList().join().size(), 50 + 1 - 1 - 5, "RYW full count");
				expectEq(gk.apply(KeySelector.firstGreaterThan(ks.get(5))), k("gr", "005a"), "RYW getKey");
				expectEq(gk.apply(KeySelector.lastLessThan(ks.get(45))), ks.get(39), "RYW getKey over a cleared range");
				expectEq(keys(tr.getRange(ks.get(38), ks.get(47), 0, true).asList().join()),
						Arrays.asList(p(ks.get(46)), p(ks.get(45)), p(ks.get(39)), p(ks.get(38))), "RYW reverse over a cleared range");
			}
			return null;
		});

		check("get_range_large", db -> {
			int n = 2000;
			List<byte[]> ks = new ArrayList<>();
			for (int i = 0; i < n; i++)
				ks.add(k("big", String.format("%05d", i)));
			byte[] value = new byte[200];
			Arrays.fill(value, (byte) 'x');
			writeMany(db, ks, i -> value);
			List<String> all = ps(ks);
			byte[] b = k("big", ""), e = k("big", "~");
			try (Transaction tr = db.createTransaction()) {
				for (StreamingMode mode : new StreamingMode[] { StreamingMode.WANT_ALL, StreamingMode.ITERATOR, StreamingMode.SMALL,
						StreamingMode.MEDIUM, StreamingMode.LARGE, StreamingMode.SERIAL }) {
					expectEq(keys(tr.getRange(b, e, 0, false, mode).asList().join()), all, n + " keys in mode " + mode);
					expectEq(keys(tr.getRange(b, e, 1500, true, mode).asList().join()), reversed(all).subList(0, 1500),
							"reverse limit 1500 in mode " + mode);
					int count = 0;
					AsyncIterator<KeyValue> it = tr.getRange(b, e, 0, false, mode).iterator();
					while (it.hasNext()) {
						KeyValue kv = it.next();
						if (!Arrays.equals(kv.getKey(), ks.get(count)) || kv.getValue().length != 200)
							throw new AssertionError("iterator row " + count + " in mode " + mode + ": " + p(kv.getKey()));
						count++;
					}
					expectEq(count, n, "iterator rows in mode " + mode);
				}
				expectEq(tr.getRange(b, e, 1234, false, StreamingMode.EXACT).asList().join().size(), 1234, "EXACT, limit 1234");
				expectEq(tr.snapshot().getRange(b, e, 0, false, StreamingMode.ITERATOR).asList().join().size(), n, "snapshot");
				// an iterator abandoned part way, then the transaction used again
				AsyncIterator<KeyValue> it = tr.getRange(b, e).iterator();
				for (int i = 0; i < 10; i++)
					it.next();
				it.cancel();
				expectEq(tr.get(ks.get(1999)).join(), value, "get after a cancelled iterator");
			}
			return n + " keys x " + value.length + " bytes";
		});

		check("direct_buffer_range_reads", db -> {
			// FDB.enableDirectBufferQuery: RangeQuery reads through fdbJNI's direct ByteBuffer path
			byte[] b = k("big", ""), e = k("big", "~");
			List<String> want = db.read(tr -> keys(tr.getRange(b, e).asList().join()));
			expect(want.size() == 2000, "needs get_range_large's rows: " + want.size());
			fdb.enableDirectBufferQuery(true);
			try {
				expect(fdb.isDirectBufferQueriesEnabled(), "isDirectBufferQueriesEnabled");
				try (Transaction tr = db.createTransaction()) {
					for (StreamingMode mode : new StreamingMode[] { StreamingMode.WANT_ALL, StreamingMode.ITERATOR, StreamingMode.SERIAL }) {
						expectEq(keys(tr.getRange(b, e, 0, false, mode).asList().join()), want, "direct buffers, mode " + mode);
						expectEq(keys(tr.getRange(b, e, 777, true, mode).asList().join()), reversed(want).subList(0, 777),
								"direct buffers, mode " + mode + " reverse limit 777");
					}
					expectEq(tr.getRange(b, e, 100, false, StreamingMode.EXACT).asList().join().size(), 100, "direct buffers, EXACT");
				}
			} finally {
				fdb.enableDirectBufferQuery(false);
			}
			return null;
		});

		check("tuple_layer", db -> {
			List<Tuple> samples = Arrays.asList(
					new Tuple(), Tuple.from((Object) null), Tuple.from((Object) new byte[] { 'b', 0, 'n' }), Tuple.from("unicode \u00e9\u4e2d"),
					Tuple.from(0L), Tuple.from(1L), Tuple.from(-1L), Tuple.from(255L), Tuple.from(-256L),
					Tuple.from(Long.MAX_VALUE), Tuple.from(Long.MIN_VALUE), Tuple.from(BigInteger.ONE.shiftLeft(100)),
					Tuple.from(BigInteger.ONE.shiftLeft(100).negate()), Tuple.from(true, false), Tuple.from(3.5), Tuple.from(1.25f),
					Tuple.from(UUID.fromString("12345678-1234-5678-1234-567812345678")),
					Tuple.from(Tuple.from(1L, Tuple.from(b("nested"), null)), "x"), Tuple.from(Arrays.asList(1L, "list")),
					Tuple.from(Versionstamp.complete(new byte[] { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 5)));
			for (Tuple t : samples)
				expectEq(Tuple.fromBytes(t.pack()), t, "round trip " + t);
			List<Tuple> ordered = Arrays.asList(Tuple.from(BigInteger.ONE.shiftLeft(70).negate()), Tuple.from(-5L), Tuple.from(-1L),
					Tuple.from(0L), Tuple.from(1L), Tuple.from(300L), Tuple.from(BigInteger.ONE.shiftLeft(70)));
			List<Tuple> shuffled = new ArrayList<>(ordered);
			Collections.shuffle(shuffled);
			shuffled.sort((x, y) -> ByteArrayUtil.compareUnsigned(x.pack(), y.pack()));
			expectEq(shuffled, ordered, "integers sort by packed bytes");
			expect(Tuple.from("a").compareTo(Tuple.from("a", 1L)) < 0, "prefix sorts first");
			expect(Tuple.from(Versionstamp.incomplete()).hasIncompleteVersionstamp(), "incomplete versionstamp detected");
			expectEq(Tuple.from("a", 1L).range(), new Range(cat(Tuple.from("a", 1L).pack(), new byte[] { 0 }),
					cat(Tuple.from("a", 1L).pack(), new byte[] { (byte) 0xff })), "Tuple.range()");

			db.run(tr -> {
				for (long i = 0; i < 5; i++)
					tr.set(Tuple.from("javasmoke", "tuple", i, "x").pack(), Tuple.from(i * i).pack());
				return null;
			});
			try (Transaction tr = db.createTransaction()) {
				List<String> got = new ArrayList<>();
				for (KeyValue kv : tr.getRange(Tuple.from("javasmoke", "tuple").range()).asList().join())
					got.add(Tuple.fromBytes(kv.getKey()) + "=" + Tuple.fromBytes(kv.getValue()));
				List<String> want = new ArrayList<>();
				for (long i = 0; i < 5; i++)
					want.add(Tuple.from("javasmoke", "tuple", i, "x") + "=" + Tuple.from(i * i));
				expectEq(got, want, "tuple-keyed range read");
				expectEq(Tuple.fromBytes(tr.get(Tuple.from("javasmoke", "tuple", 3L, "x").pack()).join()).getLong(0), 9L, "tuple point read");
			}
			return null;
		});

		check("subspace", db -> {
			Subspace s = new Subspace(Tuple.from("javasmoke", "sub"));
			expectEq(s.getKey(), Tuple.from("javasmoke", "sub").pack(), "Subspace.getKey");
			expectEq(s.unpack(s.pack(Tuple.from(1L, "a"))), Tuple.from(1L, "a"), "pack/unpack");
			Subspace child = s.get("child");
			expectEq(child.getKey(), s.pack(Tuple.from("child")), "s.get(\"child\")");
			expect(s.contains(child.pack(5L)) && !child.contains(s.pack(5L)), "contains");
			Subspace raw = new Subspace(k("rawsub", ""));
			expectEq(raw.pack(1L), cat(k("rawsub", ""), Tuple.from(1L).pack()), "raw prefix");
			db.run(tr -> {
				for (long i = 0; i < 5; i++)
					tr.set(child.pack(i), b("" + i));
				tr.set(s.pack("other"), b("o"));
				return null;
			});
			try (Transaction tr = db.createTransaction()) {
				List<String> got = new ArrayList<>();
				for (KeyValue kv : tr.getRange(child.range()).asList().join())
					got.add(child.unpack(kv.getKey()).toString());
				expectEq(got, Arrays.asList("(0)", "(1)", "(2)", "(3)", "(4)"), "child.range()");
				expectEq(tr.getRange(s.range()).asList().join().size(), 6, "s.range()");
				expectEq(tr.get(child.pack(3L)).join(), b("3"), "child.pack(3)");
				tr.clear(child.range());
				tr.commit().join();
			}
			expectEq(db.read(tr -> tr.getRange(s.range()).asList().join()).size(), 1, "clear(child.range())");
			return null;
		});

		check("directory_layer", db -> {
			DirectoryLayer dir = DirectoryLayer.getDefault();
			List<String> root = Arrays.asList("javasmoke", "dir");
			Function<String[], List<String>> path = parts -> {
				List<String> l = new ArrayList<>(root);
				l.addAll(Arrays.asList(parts));
				return l;
			};
			dir.removeIfExists(db, root).join();
			DirectorySubspace a = dir.createOrOpen(db, path.apply(new String[] { "a" })).join();
			expectEq(a.getPath(), path.apply(new String[] { "a" }), "path of a");
			DirectorySubspace a2 = dir.createOrOpen(db, path.apply(new String[] { "a" })).join();
			expectEq(a2.getKey(), a.getKey(), "createOrOpen returns the same prefix");
			DirectorySubspace bdir = dir.create(db, path.apply(new String[] { "b" }), b("mylayer")).join();
			expectEq(bdir.getLayer(), b("mylayer"), "layer");
			expectThrows(DirectoryAlreadyExistsException.class, "create of an existing directory",
					() -> dir.create(db, path.apply(new String[] { "a" })).join());
			expectThrows(MismatchedLayerException.class, "open with the wrong layer",
					() -> dir.open(db, path.apply(new String[] { "b" }), b("otherlayer")).join());
			expectEq(dir.open(db, path.apply(new String[] { "b" }), b("mylayer")).join().getKey(), bdir.getKey(), "open with layer");
			expectEq(new TreeSet<>(dir.list(db, root).join()), new TreeSet<>(Arrays.asList("a", "b")), "list");
			expect(dir.exists(db, path.apply(new String[] { "a" })).join(), "exists a");

			put(db, a.pack("x"), b("in a"));
			DirectorySubspace c = dir.move(db, path.apply(new String[] { "a" }), path.apply(new String[] { "c" })).join();
			expectEq(c.getPath(), path.apply(new String[] { "c" }), "moved path");
			expectEq(c.getKey(), a.getKey(), "move keeps the prefix");
			expectEq(new TreeSet<>(dir.list(db, root).join()), new TreeSet<>(Arrays.asList("b", "c")), "list after move");
			expect(!dir.exists(db, path.apply(new String[] { "a" })).join(), "a gone after move");
			expectEq(get(db, c.pack("x")), b("in a"), "data follows the move");
			DirectorySubspace d = c.moveTo(db, path.apply(new String[] { "d" })).join();
			expectEq(d.getPath(), path.apply(new String[] { "d" }), "DirectorySubspace.moveTo");

			DirectorySubspace sub = d.createOrOpen(db, Arrays.asList("nested", "deeper")).join();
			expectEq(sub.getPath(), path.apply(new String[] { "d", "nested", "deeper" }), "nested path");
			expectEq(d.list(db).join(), Arrays.asList("nested"), "list from a DirectorySubspace");

			DirectorySubspace part = dir.create(db, path.apply(new String[] { "part" }), DirectoryLayer.PARTITION_LAYER).join();
			DirectorySubspace inner = part.createOrOpen(db, Arrays.asList("inner")).join();
			expectEq(inner.getPath(), path.apply(new String[] { "part", "inner" }), "path inside a partition");
			expectEq(dir.open(db, path.apply(new String[] { "part", "inner" })).join().getKey(), inner.getKey(), "open through the partition");
			expectEq(part.list(db).join(), Arrays.asList("inner"), "partition list");
			expectThrows(DirectoryMoveException.class, "move out of a partition",
					() -> dir.move(db, path.apply(new String[] { "part", "inner" }), path.apply(new String[] { "outside" })).join());

			dir.remove(db, path.apply(new String[] { "d" })).join();
			expect(!dir.exists(db, path.apply(new String[] { "d" })).join(), "removed");
			expectEq(get(db, c.pack("x")), null, "contents removed");
			expect(!dir.removeIfExists(db, path.apply(new String[] { "d" })).join(), "removeIfExists of a missing directory");
			expectThrows(NoSuchDirectoryException.class, "remove of a missing directory",
					() -> dir.remove(db, path.apply(new String[] { "d" })).join());

			// a private directory layer in its own key space, used inside one transaction
			DirectoryLayer dl = new DirectoryLayer(new Subspace(cat(k("dl", ""), new byte[] { (byte) 0xfe })), new Subspace(k("dl", "")));
			try (Transaction tr = db.createTransaction()) {
				DirectorySubspace x = dl.createOrOpen(tr, Arrays.asList("x")).join();
				DirectorySubspace y = dl.createOrOpen(tr, Arrays.asList("y")).join();
				expect(!Arrays.equals(x.getKey(), y.getKey()), "distinct prefixes from the allocator");
				tr.commit().join();
			}
			expectEq(dl.list(db).join(), Arrays.asList("x", "y"), "private DirectoryLayer list");
			dir.remove(db, root).join();
			expect(!dir.exists(db, root).join(), "root removed");
			return null;
		});

		check("atomic_ops", db -> {
			Function<String, byte[]> K = n -> k("atomic", n);
			try (Transaction tr = db.createTransaction()) {
				tr.mutate(MutationType.ADD, K.apply("add"), i64(5));
				tr.mutate(MutationType.ADD, K.apply("add"), i64(5));
				expectEq(fromI64(tr.get(K.apply("add")).join()), 10L, "ADD read in the same transaction");
				tr.mutate(MutationType.ADD, K.apply("add"), i64(-3));
				tr.set(K.apply("and"), new byte[] { 0x0c });
				tr.set(K.apply("or"), new byte[] { 0x0c });
				tr.set(K.apply("xor"), new byte[] { 0x0c });
				tr.set(K.apply("max"), i64(5));
				tr.set(K.apply("min"), i64(5));
				tr.set(K.apply("bmin"), b("mmm"));
				tr.set(K.apply("bmax"), b("mmm"));
				tr.set(K.apply("app"), b("ab"));
				tr.set(K.apply("cac1"), b("same"));
				tr.set(K.apply("cac2"), b("diff"));
				tr.set(K.apply("trunc"), i64((1L << 40) + 1));
				tr.commit().join();
			}
			db.run(tr -> {
				tr.mutate(MutationType.BIT_AND, K.apply("and"), new byte[] { 0x0a });
				tr.mutate(MutationType.BIT_OR, K.apply("or"), new byte[] { 0x0a });
				tr.mutate(MutationType.BIT_XOR, K.apply("xor"), new byte[] { 0x0a });
				tr.mutate(MutationType.MAX, K.apply("max"), i64(3));
				tr.mutate(MutationType.MIN, K.apply("min"), i64(2));
				tr.mutate(MutationType.MAX, K.apply("max-missing"), i64(4));
				tr.mutate(MutationType.MIN, K.apply("min-missing"), i64(4));
				tr.mutate(MutationType.BIT_AND, K.apply("and-missing"), new byte[] { 0x0f });
				tr.mutate(MutationType.BYTE_MIN, K.apply("bmin"), b("abc"));
				tr.mutate(MutationType.BYTE_MAX, K.apply("bmax"), b("zz"));
				tr.mutate(MutationType.APPEND_IF_FITS, K.apply("app"), b("cd"));
				tr.mutate(MutationType.COMPARE_AND_CLEAR, K.apply("cac1"), b("same"));
				tr.mutate(MutationType.COMPARE_AND_CLEAR, K.apply("cac2"), b("same"));
				tr.mutate(MutationType.ADD, K.apply("trunc"), new byte[] { 1, 0, 0, 0 }); // shorter param truncates
				tr.mutate(MutationType.ADD, K.apply("add"), i64(100));
				return null;
			});
			try (Transaction tr = db.createTransaction()) {
				expectEq(fromI64(tr.get(K.apply("add")).join()), 107L, "ADD");
				expectEq(tr.get(K.apply("and")).join(), new byte[] { 0x08 }, "BIT_AND");
				expectEq(tr.get(K.apply("or")).join(), new byte[] { 0x0e }, "BIT_OR");
				expectEq(tr.get(K.apply("xor")).join(), new byte[] { 0x06 }, "BIT_XOR");
				expectEq(fromI64(tr.get(K.apply("max")).join()), 5L, "MAX");
				expectEq(fromI64(tr.get(K.apply("min")).join()), 2L, "MIN");
				expectEq(fromI64(tr.get(K.apply("max-missing")).join()), 4L, "MAX on a missing key");
				expectEq(fromI64(tr.get(K.apply("min-missing")).join()), 4L, "MIN on a missing key");
				expectEq(tr.get(K.apply("and-missing")).join(), new byte[] { 0x0f }, "BIT_AND on a missing key");
				expectEq(tr.get(K.apply("bmin")).join(), b("abc"), "BYTE_MIN");
				expectEq(tr.get(K.apply("bmax")).join(), b("zz"), "BYTE_MAX");
				expectEq(tr.get(K.apply("app")).join(), b("abcd"), "APPEND_IF_FITS");
				expectEq(tr.get(K.apply("cac1")).join(), null, "COMPARE_AND_CLEAR (equal)");
				expectEq(tr.get(K.apply("cac2")).join(), b("diff"), "COMPARE_AND_CLEAR (different)");
				expectEq(tr.get(K.apply("trunc")).join(), new byte[] { 2, 0, 0, 0 }, "ADD with a shorter param");
				// MAX/MIN compare little-endian: 0x0100 (256) > 0x00ff (255)
				tr.set(K.apply("le"), new byte[] { 0, 1 });
				tr.mutate(MutationType.MAX, K.apply("le"), new byte[] { (byte) 0xff, 0 });
				expectEq(tr.get(K.apply("le")).join(), new byte[] { 0, 1 }, "MAX is little-endian (RYW)");
				tr.commit().join();
			}
			expectEq(get(db, K.apply("le")), new byte[] { 0, 1 }, "MAX is little-endian (stored)");
			return null;
		});

		check("versionstamps", db -> {
			Subspace vss = new Subspace(Tuple.from("javasmoke", "vs"));
			byte[] vkey = k("vs", "value");
			Function<Integer, Function<Transaction, CompletableFuture<byte[]>>> write = uv -> tr -> {
				tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, vss.packWithVersionstamp(Tuple.from(Versionstamp.incomplete(uv), "k")), b("v"));
				tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, vkey,
						Tuple.from("prefix", Versionstamp.incomplete(), "suffix").packWithVersionstamp());
				return tr.getVersionstamp();
			};
			try (Transaction tr = db.createTransaction()) {
				write.apply(7).apply(tr);
				expectError(1036, "reading a versionstamped value in its own transaction (accessed_unreadable)", () -> tr.get(vkey).join());
			}
			byte[] vs1 = db.run(write.apply(7)).join();
			expectEq(vs1.length, 10, "versionstamp length");
			byte[] vs2 = db.run(write.apply(8)).join();
			expect(ByteArrayUtil.compareUnsigned(vs2, vs1) > 0, "versionstamps increase");

			try (Transaction tr = db.createTransaction()) {
				List<KeyValue> rows = tr.getRange(vss.range()).asList().join();
				expectEq(rows.size(), 2, "two versionstamped keys");
				Versionstamp v0 = vss.unpack(rows.get(0).getKey()).getVersionstamp(0);
				Versionstamp v1 = vss.unpack(rows.get(1).getKey()).getVersionstamp(0);
				expectEq(v0, Versionstamp.complete(vs1, 7), "first key");
				expectEq(v1, Versionstamp.complete(vs2, 8), "second key");
				expectEq(Tuple.fromBytes(tr.get(vkey).join()), Tuple.from("prefix", Versionstamp.complete(vs2, 0), "suffix"), "versionstamped value");
			}

			// committed version = first 8 bytes of the versionstamp
			byte[] raw = cat(new byte[10], b("tail"), new byte[4]);
			byte[] vs3;
			long cv;
			try (Transaction tr = db.createTransaction()) {
				tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, k("vs", "raw"), raw);
				CompletableFuture<byte[]> f = tr.getVersionstamp();
				expect(!f.isDone(), "versionstamp not ready before commit");
				tr.commit().join();
				vs3 = f.join();
				cv = tr.getCommittedVersion();
			}
			expectEq(ByteBuffer.wrap(vs3, 0, 8).getLong(), cv, "versionstamp vs committed version");
			expectEq(get(db, k("vs", "raw")), cat(vs3, b("tail")), "raw versionstamped value");

			// read-only transaction: no commit version, getVersionstamp fails with 2021
			try (Transaction tr = db.createTransaction()) {
				tr.get(vkey).join();
				CompletableFuture<byte[]> f = tr.getVersionstamp();
				tr.commit().join();
				expectEq(tr.getCommittedVersion(), -1L, "read-only committed version");
				expectError(2021, "getVersionstamp of a read-only transaction (no_commit_version)", f::join);
			}
			// several versionstamped keys in one transaction share its versionstamp
			byte[] vs4 = db.run(tr -> {
				for (int uv = 2; uv >= 0; uv--)
					tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, vss.packWithVersionstamp(Tuple.from("multi", Versionstamp.incomplete(uv))), b("" + uv));
				return tr.getVersionstamp();
			}).join();
			List<String> multi = new ArrayList<>();
			for (KeyValue kv : db.read(tr -> tr.getRange(vss.range(Tuple.from("multi"))).asList().join()))
				multi.add(vss.unpack(kv.getKey()).getVersionstamp(1) + "=" + new String(kv.getValue(), StandardCharsets.UTF_8));
			expectEq(multi, Arrays.asList(Versionstamp.complete(vs4, 0) + "=0", Versionstamp.complete(vs4, 1) + "=1",
					Versionstamp.complete(vs4, 2) + "=2"), "three user versions in one transaction");
			// a commit that fails: the versionstamp future fails with transaction_invalid_version
			try (Transaction tr = db.createTransaction()) {
				tr.get(vkey).join();
				tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, k("vs", "conflict"), raw);
				CompletableFuture<byte[]> f = tr.getVersionstamp();
				put(db, vkey, b("interference"));
				expectError(1020, "conflicting commit", () -> tr.commit().join());
				expectError(2020, "getVersionstamp of a conflicting commit (transaction_invalid_version)", f::join);
			}
			// an invalid offset is reported at commit (client_invalid_operation)
			try (Transaction tr = db.createTransaction()) {
				tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, k("vs", "bad"), b("abc"));
				expectError(2000, "versionstamped value shorter than 4 bytes", () -> tr.commit().join());
			}
			return "versionstamp " + ByteArrayUtil.printable(vs2);
		});

		check("watches", 90, db -> {
			byte[] key = k("watch", "a");
			put(db, key, b("0"));
			CompletableFuture<Void> w = db.run(tr -> tr.watch(key));
			CountDownLatch fired = new CountDownLatch(1);
			w.thenRun(fired::countDown);
			sleep(500);
			expect(!w.isDone(), "watch fired without a change");
			put(db, key, b("1")); // a change from another transaction
			try {
				w.get(15, TimeUnit.SECONDS);
			} catch (TimeoutException e) {
				throw new AssertionError("watch did not fire within 15 s after a change");
			}
			expect(fired.await(5, TimeUnit.SECONDS), "thenRun callback ran");

			// several watches, one change each in one transaction
			List<CompletableFuture<Void>> ws = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				final int j = i;
				ws.add(db.run(tr -> tr.watch(k("watch", "m" + j))));
			}
			sleep(300);
			expect(ws.stream().noneMatch(CompletableFuture::isDone), "watches on missing keys fired early");
			db.run(tr -> {
				for (int i = 0; i < 5; i++)
					tr.set(k("watch", "m" + i), b("x"));
				return null;
			});
			try {
				AsyncUtil.whenAll(ws).get(15, TimeUnit.SECONDS);
			} catch (TimeoutException e) {
				throw new AssertionError("not all of 5 watches fired within 15 s");
			}

			// a watch set in the transaction that changes the key fires once the value changes again
			CompletableFuture<Void> w2 = db.run(tr -> {
				tr.set(key, b("2"));
				return tr.watch(key);
			});
			sleep(300);
			expect(!w2.isDone(), "watch on a key written in its own transaction fired without a later change");
			put(db, key, b("3"));
			w2.get(15, TimeUnit.SECONDS);

			// a change between the watch's read and its (read-only) commit fires it at once
			CompletableFuture<Void> w6;
			try (Transaction tr = db.createTransaction()) {
				w6 = tr.watch(key);
				tr.get(key).join();
				put(db, key, b("changed before the commit"));
				tr.commit().join();
			}
			try {
				w6.get(15, TimeUnit.SECONDS);
			} catch (TimeoutException e) {
				throw new AssertionError("watch whose key changed before its commit did not fire within 15 s");
			}

			Map<String, Body> parts = new LinkedHashMap<>();
			parts.put("cancel() of a watch future", () -> {
				CompletableFuture<Void> w3 = db.run(tr -> tr.watch(key));
				w3.cancel(true);
				expect(w3.isCancelled(), "isCancelled");
			});
			parts.put("watch of a cancelled transaction", () -> {
				try (Transaction tr = db.createTransaction()) {
					CompletableFuture<Void> w4 = tr.watch(key);
					tr.cancel();
					try {
						w4.get(10, TimeUnit.SECONDS);
						throw new AssertionError("succeeded");
					} catch (TimeoutException e) {
						throw new AssertionError("not ready 10 s after cancel");
					} catch (ExecutionException e) {
						FDBException f = asFdb(e);
						expect(f != null && (f.getCode() == 1025 || f.getCode() == 1101), "error " + unwrap(e));
					}
				}
			});
			parts.put("watch with read-your-writes disabled (watches_disabled)", () -> {
				try (Transaction tr = db.createTransaction()) {
					tr.options().setReadYourWritesDisable();
					expectError(1034, "watch", () -> tr.watch(key).join());
				}
			});
			parts.put("watch of a 20000-byte key (key_too_large)", () -> {
				try (Transaction tr = db.createTransaction()) {
					expectError(2102, "watch", () -> tr.watch(cat(k("watch", ""), new byte[20000])).join());
				}
			});
			parts.put("watch in a transaction whose commit conflicts", () -> {
				try (Transaction tr = db.createTransaction()) {
					tr.get(key).join();
					tr.set(k("watch", "other"), b("x"));
					CompletableFuture<Void> w5 = tr.watch(k("watch", "c"));
					put(db, key, b("4"));
					expectError(1020, "commit", () -> tr.commit().join());
					try {
						w5.get(10, TimeUnit.SECONDS);
						throw new AssertionError("watch succeeded");
					} catch (TimeoutException e) {
						throw new AssertionError("watch not ready 10 s after the failed commit");
					} catch (ExecutionException e) {
						FDBException f = asFdb(e);
						expect(f != null && f.getCode() == 1020, "watch error " + unwrap(e) + ", want 1020 (cancelWatches(e))");
					}
				}
			});
			parts.put("MAX_WATCHES 3 on a second Database: the 4th watch fails with too_many_watches", () -> {
				try (Database db2 = fdb.open(clusterFile)) {
					db2.options().setMaxWatches(3);
					List<CompletableFuture<Void>> held = new ArrayList<>();
					try {
						for (int i = 0; i < 3; i++) {
							final int j = i;
							held.add(db2.run(tr -> tr.watch(k("watch", "max", j))));
						}
						sleep(200);
						for (CompletableFuture<Void> h : held)
							expect(!h.isDone(), "one of the first 3 watches is done: " + h);
						expectError(1032, "4th watch", () -> db2.run(tr -> tr.watch(k("watch", "max", 3))).get(10, TimeUnit.SECONDS));
					} finally {
						held.forEach(h -> h.cancel(true));
					}
				}
			});
			allOf(parts);
			return null;
		});

		check("snapshot_reads", db -> {
			byte[] k1 = k("snap", 1), k2 = k("snap", 2);
			put(db, k1, b("a"));
			try (Transaction tr1 = db.createTransaction()) {
				ReadTransaction snap = tr1.snapshot();
				expect(snap.isSnapshot() && !tr1.isSnapshot(), "isSnapshot");
				expectEq(snap.get(k1).join(), b("a"), "snapshot get");
				expectEq(snap.getRange(k1, k("snap", 3)).asList().join().size(), 1, "snapshot getRange");
				expectEq(snap.getKey(KeySelector.firstGreaterOrEqual(k1)).join(), k1, "snapshot getKey");
				expect(!snap.addReadConflictKeyIfNotSnapshot(k1), "addReadConflictKeyIfNotSnapshot on a snapshot");
				put(db, k1, b("b")); // a conflicting write by another transaction
				tr1.set(k2, b("x"));
				tr1.commit().join(); // a snapshot read adds no read conflict
			}
			try (Transaction tr = db.createTransaction()) {
				tr.set(k1, b("mine"));
				expectEq(tr.snapshot().get(k1).join(), b("mine"), "snapshot reads see own writes by default");
			}
			try (Transaction tr = db.createTransaction()) {
				tr.options().setSnapshotRywDisable();
				tr.set(k1, b("mine"));
				expectEq(tr.snapshot().get(k1).join(), b("b"), "setSnapshotRywDisable");
				expectEq(tr.get(k1).join(), b("mine"), "non-snapshot read still sees own write");
			}
			return null;
		});

		check("conflicts", 90, db -> {
			byte[] key = k("conf", "k"), other = k("conf", "other");
			put(db, key, b("0"));
			try (Transaction tr1 = db.createTransaction()) {
				tr1.get(key).join();
				tr1.set(other, b("x"));
				put(db, key, b("changed"));
				FDBException e = null;
				try {
					tr1.commit().join();
				} catch (CompletionException ce) {
					e = asFdb(ce);
				}
				expect(e != null, "conflicting commit succeeded");
				expectEq(e.getCode(), 1020, "conflict error code");
				expectEq(e.getMessage(), "Transaction not committed due to conflict with another transaction", "message from fdb_get_error");
				expect(e.isRetryable() && e.isRetryableNotCommitted() && !e.isMaybeCommitted(), "1020 predicates");
				try (Transaction t2 = tr1.onError(e).join()) { // retryable: after a backoff, the transaction is reset
					expectEq(t2.get(other).join(), null, "onError reset the transaction");
				}
			}

			// db.run retries after a conflict
			put(db, key, b("10"));
			AtomicInteger attempts = new AtomicInteger();
			db.run(tr -> {
				int v = Integer.parseInt(new String(tr.get(key).join(), StandardCharsets.UTF_8));
				if (attempts.incrementAndGet() == 1)
					put(db, key, b("100")); // interfere once
				tr.set(key, b("" + (v + 1)));
				return null;
			});
			expectEq(attempts.get(), 2, "attempts");
			expectEq(get(db, key), b("101"), "value after retry");

			// explicit conflict ranges
			try (Transaction tr1 = db.createTransaction()) {
				tr1.getReadVersion().join();
				tr1.addReadConflictKey(key);
				tr1.set(other, b("y"));
				put(db, key, b("z"));
				expectError(1020, "addReadConflictKey", () -> tr1.commit().join());
			}
			try (Transaction tr1 = db.createTransaction(); Transaction tr2 = db.createTransaction()) {
				tr1.get(other).join();
				tr2.addWriteConflictRange(k("conf", "o"), k("conf", "p"));
				tr2.commit().join();
				tr1.set(key, b("w"));
				expectError(1020, "addWriteConflictRange", () -> tr1.commit().join());
			}
			try (Transaction tr1 = db.createTransaction(); Transaction tr2 = db.createTransaction()) {
				tr1.getReadVersion().join();
				tr1.addReadConflictRange(k("conf", "a"), k("conf", "z"));
				expect(tr1.addReadConflictKeyIfNotSnapshot(other), "addReadConflictKeyIfNotSnapshot");
				tr1.set(other, b("y"));
				tr2.addWriteConflictKey(key);
				tr2.commit().join();
				expectError(1020, "addReadConflictRange + addWriteConflictKey", () -> tr1.commit().join());
			}
			// NEXT_WRITE_NO_WRITE_CONFLICT_RANGE: that write does not conflict with a reader
			try (Transaction tr1 = db.createTransaction(); Transaction tr2 = db.createTransaction()) {
				tr1.get(key).join();
				tr1.set(other, b("y"));
				tr2.options().setNextWriteNoWriteConflictRange();
				tr2.set(key, b("quiet"));
				tr2.commit().join();
				tr1.commit().join();
			}
			// REPORT_CONFLICTING_KEYS
			try (Transaction tr1 = db.createTransaction()) {
				tr1.options().setReportConflictingKeys();
				tr1.get(key).join();
				tr1.set(other, b("y"));
				put(db, key, b("loud"));
				expectError(1020, "conflict with REPORT_CONFLICTING_KEYS", () -> tr1.commit().join());
				byte[] ck = cat(new byte[] { (byte) 0xff, (byte) 0xff }, b("/transaction/conflicting_keys/"));
				List<String> rows = new ArrayList<>();
				for (KeyValue kv : tr1.getRange(ck, cat(ck, new byte[] { (byte) 0xff })).asList().join())
					rows.add(p(kv.getKey()) + "=" + p(kv.getValue()));
				expectEq(rows, Arrays.asList(p(cat(ck, key)) + "=" + p(b("1")), p(cat(ck, key, new byte[] { 0 })) + "=" + p(b("0"))),
						"conflicting_keys special keys");
			}

			// concurrent read-modify-write from several threads (db.run) and futures (runAsync)
			byte[] counter = k("conf", "counter");
			put(db, counter, b("0"));
			List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
			List<Thread> threads = new ArrayList<>();
			for (int t = 0; t < 4; t++) {
				Thread th = new Thread(() -> {
					try {
						for (int i = 0; i < 15; i++)
							db.run(tr -> {
								tr.set(counter, b("" + (Integer.parseInt(new String(tr.get(counter).join(), StandardCharsets.UTF_8)) + 1)));
								return null;
							});
					} catch (Throwable e) {
						errors.add(e);
					}
				});
				th.start();
				threads.add(th);
			}
			for (Thread th : threads)
				th.join(60000);
			expect(errors.isEmpty(), "worker errors: " + errors);
			expectEq(get(db, counter), b("60"), "4 threads x 15 increments");
			List<CompletableFuture<Void>> fs = new ArrayList<>();
			for (int i = 0; i < 20; i++)
				fs.add(db.runAsync(tr -> tr.get(counter).thenAccept(v -> tr.set(counter, b("" + (Integer.parseInt(new String(v, StandardCharsets.UTF_8)) + 1))))));
			AsyncUtil.whenAll(fs).get(60, TimeUnit.SECONDS);
			expectEq(get(db, counter), b("80"), "20 concurrent runAsync increments");
			return null;
		});

		check("transaction_options", db -> {
			byte[] key = k("opt", "k");
			put(db, key, b("db"));

			// TIMEOUT -> transaction_timed_out (1031), not retryable
			try (Transaction tr = db.createTransaction()) {
				tr.options().setTimeout(1);
				sleep(100);
				expectError(1031, "get after the timeout", () -> tr.get(key).join());
				expectError(1031, "commit after the timeout", () -> tr.commit().join());
			}
			try (Transaction tr = db.createTransaction()) {
				tr.options().setTimeout(1);
				sleep(100);
				expectError(1031, "onError(1031)", () -> tr.onError(fdbErr(1031)).join());
			}
			AtomicInteger timedOut = new AtomicInteger();
			expectError(1031, "db.run with a 50 ms timeout and a 200 ms body", () -> db.run(tr -> {
				tr.options().setTimeout(50);
				timedOut.incrementAndGet();
				sleep(200);
				return tr.get(key).join();
			}));
			expectEq(timedOut.get(), 1, "a timed-out transaction is not retried");

			// RETRY_LIMIT
			try (Transaction tr = db.createTransaction()) {
				tr.options().setRetryLimit(1);
				try (Transaction t2 = tr.onError(fdbErr(1020)).join()) {
					expectError(1020, "second onError with retry limit 1", () -> t2.onError(fdbErr(1020)).join());
				}
			}
			AtomicInteger attempts = new AtomicInteger();
			expectError(1020, "db.run with retry limit 2", () -> db.run(tr -> {
				tr.options().setRetryLimit(2);
				attempts.incrementAndGet();
				throw fdbErr(1020);
			}));
			expectEq(attempts.get(), 3, "attempts with retry limit 2");

			// SIZE_LIMIT -> transaction_too_large
			try (Transaction tr = db.createTransaction()) {
				tr.options().setSizeLimit(1000);
				tr.set(key, new byte[2000]);
				expectError(2101, "size limit 1000", () -> tr.commit().join());
			}
			// READ_YOUR_WRITES_DISABLE
			try (Transaction tr = db.createTransaction()) {
				tr.options().setReadYourWritesDisable();
				tr.set(key, b("new"));
				expectEq(tr.get(key).join(), b("db"), "setReadYourWritesDisable reads the database");
			}
			// system keys
			byte[] sys = cat(new byte[] { (byte) 0xff }, b("/javasmoke"));
			try (Transaction tr = db.createTransaction()) {
				expectError(2004, "read of a system key without READ_SYSTEM_KEYS", () -> tr.get(sys).join());
			}
			try (Transaction tr = db.createTransaction()) {
				tr.options().setReadSystemKeys();
				expectEq(tr.get(sys).join(), null, "read of a system key with READ_SYSTEM_KEYS");
			}
			try (Transaction tr = db.createTransaction()) {
				tr.set(sys, b("x"));
				expectError(2004, "write of a system key without ACCESS_SYSTEM_KEYS", () -> tr.commit().join());
			}
			// key and value size limits
			put(db, k("opt", "v"), new byte[100000]);
			expectEq(get(db, k("opt", "v")).length, 100000, "100000-byte value");
			try (Transaction tr = db.createTransaction()) {
				tr.set(k("opt", "v"), new byte[100001]);
				expectError(2103, "value_too_large", () -> tr.commit().join());
			}
			try (Transaction tr = db.createTransaction()) {
				tr.set(new byte[10001], new byte[0]);
				expectError(2102, "key_too_large", () -> tr.commit().join());
			}
			try (Transaction tr = db.createTransaction()) {
				expectEq(tr.get(cat(k("opt", ""), new byte[20000])).join(), null, "get of a key longer than any stored key");
			}
			// the default 10,000,000-byte transaction size limit
			try (Transaction tr = db.createTransaction()) {
				for (int i = 0; i < 95; i++)
					tr.set(k("opt", "mb", i), new byte[100000]);
				tr.commit().join(); // ~9.5 MB
			}
			expectEq(db.read(tr -> tr.getRange(Range.startsWith(k("opt", "mb", ""))).asList().join()).size(), 95, "~9.5 MB transaction committed");
			try (Transaction tr = db.createTransaction()) {
				for (int i = 0; i < 105; i++)
					tr.set(k("opt", "mb", i), new byte[100000]);
				expectError(2101, "~10.5 MB transaction (transaction_too_large)", () -> tr.commit().join());
			}
			clearPrefix(db, k("opt", "mb", ""));

			// options that are accepted and keep the transaction working
			byte[] got = db.run(tr -> {
				tr.options().setCausalReadRisky();
				tr.options().setCausalWriteRisky();
				tr.options().setPriorityBatch();
				tr.options().setPrioritySystemImmediate();
				tr.options().setMaxRetryDelay(100);
				tr.options().setLockAware();
				tr.options().setReadLockAware();
				tr.options().setDebugTransactionIdentifier("javasmoke");
				tr.options().setLogTransaction();
				tr.options().setTransactionLoggingMaxFieldLength(1000);
				tr.options().setTag("javasmoke");
				tr.options().setAutoThrottleTag("javasmoke2");
				tr.options().setUsedDuringCommitProtectionDisable();
				tr.options().setIncludePortInAddress();
				tr.options().setSnapshotRywEnable();
				tr.options().setReadPriorityNormal();
				tr.options().setReadServerSideCacheEnable();
				tr.set(key, b("opts"));
				return tr.get(key).join();
			});
			expectEq(got, b("opts"), "transaction with many options");
			return null;
		});

		check("database_options", db -> {
			byte[] key = k("dbopt", "k");
			put(db, key, b("v"));
			db.options().setLocationCacheSize(100001);
			db.options().setMaxWatches(10000);
			db.options().setDatacenterId("dc1");
			db.options().setMachineId("machine1");
			db.options().setTransactionLoggingMaxFieldLength(1000);
			db.options().setTransactionMaxRetryDelay(1000);
			db.options().setTransactionCausalReadRisky();
			db.options().setTransactionIncludePortInAddress();
			db.options().setSnapshotRywDisable();
			db.options().setSnapshotRywEnable();
			expectEq(get(db, key), b("v"), "database usable after options");

			db.options().setTransactionTimeout(1);
			try (Transaction tr = db.createTransaction()) {
				sleep(100);
				expectError(1031, "database transaction timeout", () -> tr.get(key).join());
			} finally {
				db.options().setTransactionTimeout(0);
			}
			expectEq(get(db, key), b("v"), "timeout cleared");

			db.options().setTransactionSizeLimit(1000);
			try (Transaction tr = db.createTransaction()) {
				tr.set(key, new byte[2000]);
				expectError(2101, "database transaction size limit", () -> tr.commit().join());
			} finally {
				db.options().setTransactionSizeLimit(10000000);
			}

			db.options().setTransactionRetryLimit(0);
			try (Transaction tr = db.createTransaction()) {
				expectError(1020, "database transaction retry limit 0", () -> tr.onError(fdbErr(1020)).join());
			} finally {
				db.options().setTransactionRetryLimit(-1);
			}
			try (Transaction tr = db.createTransaction()) {
				tr.onError(fdbErr(1020)).join().close();
			}
			double busy = db.getMainThreadBusyness();
			expect(busy >= 0 && busy <= 1, "getMainThreadBusyness " + busy);
			return null;
		});

		check("errors_and_predicates", db -> {
			// fdb_c.cpp fdb_error_predicate, through FDBException.is*()
			int[] notCommitted = { 1020, 1007, 1009, 1038, 1078, 1042, 1051, 1037, 1213, 1223 };
			int[] maybe = { 1021, 1039 };
			for (int c : notCommitted)
				expect(fdbErr(c).isRetryable() && fdbErr(c).isRetryableNotCommitted() && !fdbErr(c).isMaybeCommitted(), "predicates for " + c);
			for (int c : maybe)
				expect(fdbErr(c).isRetryable() && fdbErr(c).isMaybeCommitted() && !fdbErr(c).isRetryableNotCommitted(), "predicates for " + c);
			for (int c : new int[] { 1031, 1025, 2101, 2004, 1101, 10, 4100 })
				expect(!(fdbErr(c).isRetryable() || fdbErr(c).isMaybeCommitted() || fdbErr(c).isRetryableNotCommitted()), "predicates for " + c);
			expect(fdbErr(0).isSuccess(), "isSuccess");
			// messages come from fdb_get_error
			try (Transaction tr = db.createTransaction()) {
				tr.options().setSizeLimit(100);
				tr.set(k("err"), new byte[200]);
				try {
					tr.commit().join();
					throw new AssertionError("commit over the size limit succeeded");
				} catch (CompletionException e) {
					FDBException f = asFdb(e);
					expect(f != null && f.getCode() == 2101, "2101: " + e.getCause());
					expectEq(f.getMessage(), "Transaction exceeds byte limit", "message of 2101");
				}
			}
			// onError of a non-retryable error hands it back; of a non-FDB exception, that exception
			try (Transaction tr = db.createTransaction()) {
				expectError(2004, "onError(2004)", () -> tr.onError(fdbErr(2004)).join());
			}
			try (Transaction tr = db.createTransaction()) {
				tr.onError(fdbErr(1021)).join().close(); // maybe-committed is retryable
			}
			try (Transaction tr = db.createTransaction()) {
				expectThrows(IllegalArgumentException.class, "onError(IllegalArgumentException)",
						() -> tr.onError(new IllegalArgumentException("x")).join());
			}
			// a set() error is reported by the next operation / commit
			try (Transaction tr = db.createTransaction()) {
				tr.set(k("err", "ok"), b("1"));
				tr.set(new byte[] { (byte) 0xff, 'x' }, b("1"));
				expectError(2004, "commit after a write to a system key", () -> tr.commit().join());
			}
			return null;
		});

		check("read_versions", db -> {
			byte[] key = k("rv", "k");
			put(db, key, b("old"));
			long rv0;
			try (Transaction tr0 = db.createTransaction()) {
				rv0 = tr0.getReadVersion().join();
			}
			expect(rv0 > 0, "read version > 0");
			put(db, key, b("new"));
			try (Transaction tr = db.createTransaction()) {
				tr.setReadVersion(rv0);
				expectEq(tr.getReadVersion().join(), rv0, "getReadVersion after setReadVersion");
				expectEq(tr.get(key).join(), b("old"), "read at an older version (MVCC)");
			}
			try (Transaction tr2 = db.createTransaction()) {
				expectEq(tr2.get(key).join(), b("new"), "current read");
				expect(tr2.getReadVersion().join() > rv0, "read versions advance");
			}
			long cv;
			try (Transaction tr = db.createTransaction()) {
				tr.set(key, b("newer"));
				tr.commit().join();
				cv = tr.getCommittedVersion();
			}
			expect(cv > rv0, "committed version > earlier read version");
			try (Transaction tr = db.createTransaction()) {
				expect(tr.getReadVersion().join() >= cv, "read version after a commit >= its commit version");
			}
			// a stale read version and a conflicting write -> 1020; a far-future one -> future_version
			try (Transaction tr = db.createTransaction()) {
				tr.setReadVersion(rv0);
				tr.get(key).join();
				tr.set(k("rv", "o"), b("x"));
				expectError(1020, "commit at an old read version after a newer write", () -> tr.commit().join());
			}
			try (Transaction tr = db.createTransaction()) {
				tr.setReadVersion(rv0 + 1000000000000L);
				expectError(1009, "read at a future version", () -> tr.get(key).join());
			}
			long deadline = System.currentTimeMillis() + 15000, rv;
			while (true) { // versions advance 1e6/s; a fresh server has nothing 6 s old yet
				try (Transaction tr = db.createTransaction()) {
					rv = tr.getReadVersion().join();
				}
				if (rv > 7000000 || System.currentTimeMillis() > deadline)
					break;
				sleep(200);
			}
			try (Transaction tr = db.createTransaction()) {
				tr.setReadVersion(rv - 6000000);
				expectError(1007, "read 6 s (6e6 versions) back (transaction_too_old)", () -> tr.get(key).join());
			}
			return null;
		});

		check("estimates_and_split_points", db -> {
			byte[] b = k("big", ""), e = k("big", "~");
			long size;
			int points;
			try (Transaction tr = db.createTransaction()) {
				size = tr.getEstimatedRangeSizeBytes(b, e).join();
				expect(size >= 0, "estimated size " + size);
				expect(tr.getEstimatedRangeSizeBytes(new Range(k("nothing", ""), k("nothing", "~"))).join() >= 0, "estimate of an empty range");
				List<byte[]> pts = tr.getRangeSplitPoints(b, e, 10000).join().getKeys();
				points = pts.size();
				expect(pts.size() >= 2 && Arrays.equals(pts.get(0), b) && Arrays.equals(pts.get(pts.size() - 1), e),
						"split points start/end: " + ps(pts.subList(0, Math.min(3, pts.size()))));
				for (int i = 0; i + 1 < pts.size(); i++)
					expect(ByteArrayUtil.compareUnsigned(pts.get(i), pts.get(i + 1)) < 0, "split points ascending");
				List<byte[]> pts2 = tr.getRangeSplitPoints(new Range(b, e), 1000000).join().getKeys();
				expect(pts2.size() >= 2, "split points with a large chunk size");
			}
			return "estimated " + size + " bytes for ~420 kB, " + points + " split points at 10 kB";
		});

		check("approximate_size", db -> {
			List<Long> s = db.run(tr -> {
				List<Long> l = new ArrayList<>();
				tr.set(k("as", 1), b("value1"));
				l.add(tr.getApproximateSize().join());
				tr.set(k("as", 2), b("value2"));
				l.add(tr.getApproximateSize().join());
				tr.clear(k("as", 3));
				l.add(tr.getApproximateSize().join());
				tr.addReadConflictKey(k("as", 4));
				l.add(tr.getApproximateSize().join());
				tr.addWriteConflictKey(k("as", 5));
				l.add(tr.getApproximateSize().join());
				return l;
			});
			for (int i = 0; i + 1 < s.size(); i++)
				expect(s.get(0) > 0 && s.get(i) < s.get(i + 1), "approximate sizes increase: " + s);
			return "sizes " + s;
		});

		check("locality", db -> {
			byte[] key = k("loc", "k");
			put(db, key, b("v"));
			String[] addrs;
			try (Transaction tr = db.createTransaction()) {
				addrs = LocalityUtil.getAddressesForKey(tr, key).join();
			}
			expect(addrs.length >= 1, "at least one address");
			for (String a : addrs)
				expect(a.matches("^\\d+\\.\\d+\\.\\d+\\.\\d+:\\d+(:tls)?$"), "address format " + a);
			List<String> boundaries = new ArrayList<>();
			try (CloseableAsyncIterator<byte[]> it = LocalityUtil.getBoundaryKeys(db, new byte[0], new byte[] { (byte) 0xff })) {
				while (it.hasNext())
					boundaries.add(p(it.next()));
			}
			expect(!boundaries.isEmpty() && boundaries.get(0).equals(p(new byte[0])), "boundary keys start with '': " + boundaries);
			List<String> viaTr = new ArrayList<>();
			try (Transaction tr = db.createTransaction();
				 CloseableAsyncIterator<byte[]> it = LocalityUtil.getBoundaryKeys(tr, new byte[0], new byte[] { (byte) 0xff })) {
				while (it.hasNext())
					viaTr.add(p(it.next()));
			}
			expectEq(viaTr, boundaries, "getBoundaryKeys(tr)");
			return "addresses " + String.join(",", addrs) + ", " + boundaries.size() + " shard boundaries";
		});

		check("special_keys_and_client_status", db -> {
			byte[] statusKey = cat(new byte[] { (byte) 0xff, (byte) 0xff }, b("/status/json"));
			String status = new String(get(db, statusKey), StandardCharsets.UTF_8);
			expect(status.contains("\"client\"") && status.contains("\"cluster\""), "status/json has client and cluster");
			byte[] cs = get(db, cat(new byte[] { (byte) 0xff, (byte) 0xff }, b("/connection_string")));
			expect(cs != null && new String(cs, StandardCharsets.UTF_8).contains("@"), "connection_string " + p(cs));
			String client = new String(db.getClientStatus().join(), StandardCharsets.UTF_8);
			expect(Pattern.compile("\"Healthy\"\\s*:\\s*true").matcher(client).find(), "getClientStatus Healthy: " +
					client.substring(0, Math.min(200, client.length())));
			return "status/json " + status.length() + " bytes, client status " + client.length() + " bytes";
		});

		check("transaction_lifecycle", db -> {
			byte[] key = k("life", "k");
			put(db, key, b("v"));
			try (Transaction tr = db.createTransaction()) {
				expectEq(tr.getCommittedVersion(), -1L, "committed version before commit");
				tr.get(key).join();
				tr.commit().join();
				expectEq(tr.getCommittedVersion(), -1L, "read-only commit");
			}
			try (Transaction tr = db.createTransaction()) {
				tr.set(key, b("x"));
				tr.cancel();
				expectError(1025, "commit after cancel", () -> tr.commit().join());
				expectError(1025, "get after cancel", () -> tr.get(key).join());
			}
			try (Transaction tr = db.createTransaction()) {
				tr.cancel();
				expectError(1025, "onError after cancel", () -> tr.onError(fdbErr(1020)).join());
			}
			expectEq(get(db, key), b("v"), "cancelled write not committed");
			// a read future handed out of db.run after the transaction was closed
			List<CompletableFuture<byte[]>> fs = new ArrayList<>();
			for (int i = 0; i < 20; i++)
				fs.add(db.run(tr -> tr.get(key)));
			for (CompletableFuture<byte[]> f : fs)
				expectEq(f.join(), b("v"), "read future returned by db.run");
			// many reads in flight in one transaction
			try (Transaction tr = db.createTransaction()) {
				List<CompletableFuture<byte[]>> reads = new ArrayList<>();
				for (int i = 0; i < 200; i++)
					reads.add(tr.get(i % 2 == 0 ? key : k("life", "missing", i)));
				List<byte[]> vals = AsyncUtil.getAll(reads).join();
				for (int i = 0; i < 200; i++)
					expectEq(vals.get(i), i % 2 == 0 ? b("v") : null, "parallel read " + i);
			}
			// a closed transaction is rejected by the binding
			Transaction closed = db.createTransaction();
			closed.close();
			expectThrows(IllegalStateException.class, "use after close", () -> closed.get(key));
			// a second Database from the same cluster file
			try (Database db2 = fdb.open(clusterFile)) {
				expectEq(get(db2, key), b("v"), "second Database");
			}
			return null;
		});

		check("timeouts_from_creation", db -> {
			// ReadYourWritesTransaction::resetTimeout: the timeout counts from creation (or reset)
			Map<String, Body> parts = new LinkedHashMap<>();
			parts.put("100 ms timeout set 300 ms after creation", () -> {
				try (Transaction tr = db.createTransaction()) {
					tr.set(k("tmo"), b("x"));
					sleep(300);
					tr.options().setTimeout(100);
					expectError(1031, "commit", () -> tr.commit().join());
				}
			});
			parts.put("commit after the timeout went off and was set to 0", () -> {
				try (Transaction tr = db.createTransaction()) {
					tr.set(k("tmo"), b("x"));
					tr.options().setTimeout(100);
					sleep(300);
					tr.options().setTimeout(0);
					expectError(1031, "commit", () -> tr.commit().join());
				}
			});
			allOf(parts);
			return null;
		});

		check("mapped_range", db -> {
			Function<Integer, String> pk = i -> String.format("primary-key-of-record-%08d", i);
			Function<Integer, byte[]> index = i -> Tuple.from("javasmoke", "mr", "INDEX", String.format("index-key-of-record-%08d", i), pk.apply(i)).pack();
			db.run(tr -> {
				for (int i = 0; i < 30; i++) {
					tr.set(index.apply(i), Tuple.from().pack());
					for (long split = 0; split < 3; split++)
						tr.set(Tuple.from("javasmoke", "mr", "RECORD", pk.apply(i), split).pack(),
								Tuple.from(String.format("data-of-record-%08d", i), split).pack());
				}
				return null;
			});
			byte[] mapper = Tuple.from("javasmoke", "mr", "RECORD", "{K[4]}", "{...}").pack();
			List<MappedKeyValue> rows = db.run(tr -> tr.getMappedRange(KeySelector.firstGreaterOrEqual(index.apply(10)),
					KeySelector.firstGreaterOrEqual(index.apply(20)), mapper, ReadTransaction.ROW_LIMIT_UNLIMITED, false, StreamingMode.WANT_ALL)
					.asList().join());
			expectEq(rows.size(), 10, "mapped rows");
			for (int i = 0; i < 10; i++) {
				MappedKeyValue m = rows.get(i);
				expectEq(m.getKey(), index.apply(10 + i), "index key " + i);
				List<KeyValue> rr = m.getRangeResult();
				expectEq(rr.size(), 3, "records of row " + i);
				for (int s = 0; s < 3; s++)
					expectEq(Tuple.fromBytes(rr.get(s).getValue()), Tuple.from(String.format("data-of-record-%08d", 10 + i), (long) s),
							"record " + i + "/" + s);
				expectEq(m.getValue(), Tuple.from().pack(), "index value " + i);
				for (int s = 0; s < 3; s++)
					expectEq(rr.get(s).getKey(), Tuple.from("javasmoke", "mr", "RECORD", pk.apply(10 + i), (long) s).pack(), "record key " + i + "/" + s);
				// as MappedRangeQueryIntegrationTest: [packed prefix, prefix with its last byte 0x00 -> 0x01)
				byte[] prefix = Tuple.from("javasmoke", "mr", "RECORD", pk.apply(10 + i)).pack();
				expectEq(m.getRangeBegin(), prefix, "range begin " + i);
				prefix[prefix.length - 1] = 0x01;
				expectEq(m.getRangeEnd(), prefix, "range end " + i);
			}
			Map<String, Body> parts = new LinkedHashMap<>();
			KeySelector mb = KeySelector.firstGreaterOrEqual(index.apply(10)), me = KeySelector.firstGreaterOrEqual(index.apply(20));
			parts.put("limit 3", () -> expectEq(db.run(tr -> tr.getMappedRange(mb, me, mapper, 3, false, StreamingMode.WANT_ALL).asList().join()).size(),
					3, "rows"));
			parts.put("snapshot (refused by the binding itself)", () -> {
				try (Transaction tr = db.createTransaction()) {
					expectThrows(UnsupportedOperationException.class, "snapshot getMappedRange",
							() -> tr.snapshot().getMappedRange(mb, me, mapper, 0, false, StreamingMode.WANT_ALL).asList().join());
				}
			});
			parts.put("read-your-writes disabled (unsupported_operation)", () -> {
				try (Transaction tr = db.createTransaction()) {
					tr.options().setReadYourWritesDisable();
					expectError(2108, "getMappedRange", () -> tr.getMappedRange(mb, me, mapper, 0, false, StreamingMode.WANT_ALL).asList().join());
				}
			});
			parts.put("over the transaction's own writes (get_mapped_range_reads_your_writes)", () -> {
				try (Transaction tr = db.createTransaction()) {
					tr.set(Tuple.from("javasmoke", "mr", "RECORD", pk.apply(12), 1L).pack(), b("mine"));
					expectError(2039, "getMappedRange", () -> tr.getMappedRange(mb, me, mapper, 0, false, StreamingMode.WANT_ALL).asList().join());
				}
			});
			allOf(parts);
			return null;
		});

		check("blob_granules_unsupported", db -> {
			// cfdb documents blob granules as unsupported (2108); reported, not judged
			List<String> got = new ArrayList<>();
			byte[] b = k("bg", ""), e = k("bg", "~");
			Map<String, Function<Void, CompletableFuture<?>>> calls = new LinkedHashMap<>();
			calls.put("Transaction.getBlobGranuleRanges", v -> {
				Transaction tr = db.createTransaction();
				return tr.getBlobGranuleRanges(b, e, 100).whenComplete((x, t) -> tr.close());
			});
			calls.put("Database.listBlobbifiedRanges", v -> db.listBlobbifiedRanges(b, e, 100));
			calls.put("Database.verifyBlobRange", v -> db.verifyBlobRange(b, e));
			for (Map.Entry<String, Function<Void, CompletableFuture<?>>> c : calls.entrySet()) {
				try {
					Object r = c.getValue().apply(null).get(10, TimeUnit.SECONDS);
					got.add(c.getKey() + " -> " + r);
				} catch (TimeoutException ex) {
					got.add(c.getKey() + " -> no answer in 10 s");
				} catch (Exception ex) {
					FDBException f = asFdb(ex);
					got.add(c.getKey() + " -> " + (f != null ? "FDBException " + f.getCode() : unwrap(ex).toString()));
				}
			}
			return "SKIP " + String.join("; ", got);
		});

		check("tenants", db -> {
			Tenant t;
			try {
				t = db.openTenant(Tuple.from("javasmoke-tenant"));
			} catch (RuntimeException e) {
				FDBException f = asFdb(e);
				if (f == null)
					throw e;
				return "SKIP openTenant -> FDBException " + f.getCode() + " (tenants are documented as unsupported in cfdb)";
			}
			try {
				t.run(tr -> tr.get(b("x")).join());
			} catch (RuntimeException e) {
				FDBException f = asFdb(e);
				if (f == null)
					throw e;
				return "SKIP tenant read -> FDBException " + f.getCode() + " (tenants are documented as unsupported in cfdb)";
			} finally {
				t.close();
			}
			return "tenant read succeeded";
		});
	}

	// ---------------------------------------------------------------------------------------------

	static String clusterFile;
	static final ExecutorService RUNNER = Executors.newCachedThreadPool(r -> {
		Thread t = new Thread(r);
		t.setDaemon(true);
		return t;
	});

	/** Runs one check; returns false if it did not finish in time (the thread is left behind). */
	static boolean runCheck(Entry c, Database db, List<String[]> failures) {
		long t0 = System.nanoTime();
		Future<String> f = RUNNER.submit(() -> c.fn.run(db));
		String detail;
		try {
			detail = f.get(c.timeout, TimeUnit.SECONDS);
		} catch (TimeoutException e) {
			failures.add(new String[] { c.name, "did not finish within " + c.timeout + " s" });
			System.out.println("FAIL " + c.name + ": did not finish within " + c.timeout + " s");
			return false;
		} catch (InterruptedException e) {
			throw new RuntimeException(e);
		} catch (ExecutionException e) {
			Throwable t = unwrap(e);
			FDBException fe = asFdb(e);
			String msg = fe != null ? "FDBException " + fe.getCode() + " (" + fe.getMessage() + ")" : t.toString();
			String where = "";
			List<String> helpers = Arrays.asList("expect", "expectEq", "expectError", "expectThrows", "allOf");
			for (StackTraceElement el : t.getStackTrace()) {
				if ("JavaSmoke.java".equals(el.getFileName()) && !helpers.contains(el.getMethodName())) {
					where = " at JavaSmoke.java:" + el.getLineNumber();
					break;
				}
			}
			failures.add(new String[] { c.name, msg + where });
			System.out.println("FAIL " + c.name + ": " + msg);
			if (verbose) {
				StringWriter sw = new StringWriter();
				t.printStackTrace(new PrintWriter(sw));
				System.out.print(sw);
			}
			return true;
		}
		double took = (System.nanoTime() - t0) / 1e9;
		if (detail != null && detail.startsWith("SKIP"))
			System.out.println("SKIP " + c.name + ": " + detail.substring(5));
		else
			System.out.printf("PASS %s (%.2fs)%s%n", c.name, took, detail != null ? ": " + detail : "");
		return true;
	}

	public static void main(String[] args) throws Exception {
		String only = null;
		for (int i = 0; i < args.length; i++) {
			if (args[i].equals("--cluster-file") && i + 1 < args.length)
				clusterFile = args[++i];
			else if (args[i].equals("--only") && i + 1 < args.length)
				only = args[++i];
			else if (args[i].equals("--verbose"))
				verbose = true;
			else {
				System.err.println("usage: JavaSmoke --cluster-file FILE [--only TEXT] [--verbose]");
				System.exit(2);
			}
		}
		if (clusterFile == null) {
			System.err.println("usage: JavaSmoke --cluster-file FILE [--only TEXT] [--verbose]");
			System.exit(2);
		}
		List<String[]> failures = new ArrayList<>();
		int total = 0;

		fdb = FDB.selectAPIVersion(730);
		// network options, before the network starts (fdb.open starts it)
		String traceDir = Files.createTempDirectory("javasmoke-trace-").toString();
		total++;
		try {
			fdb.options().setTraceEnable(traceDir);
			fdb.options().setTraceFormat("json");
			fdb.options().setTraceLogGroup("javasmoke");
			fdb.options().setKnob("min_trace_severity=10");
			System.out.println("PASS network_options");
		} catch (Exception e) {
			failures.add(new String[] { "network_options", e.toString() });
			System.out.println("FAIL network_options: " + e);
		}

		Database db = fdb.open(clusterFile);
		// libfdb_c takes these after the network is set up too
		total++;
		try {
			fdb.options().setKnob("min_trace_severity=10");
			fdb.options().setTraceEnable(traceDir);
			System.out.println("PASS network_options_after_setup");
		} catch (Exception e) {
			failures.add(new String[] { "network_options_after_setup", e.toString() });
			System.out.println("FAIL network_options_after_setup: " + e);
		}

		// start from a clean slate
		clearPrefix(db, b(PREFIX));
		clearPrefix(db, Tuple.from("javasmoke").pack());
		DirectoryLayer.getDefault().removeIfExists(db, Arrays.asList("javasmoke")).join();

		registerChecks();
		boolean hung = false;
		for (Entry c : CHECKS) {
			if (only != null && !c.name.contains(only))
				continue;
			total++;
			if (!runCheck(c, db, failures))
				hung = true;
		}

		System.out.println();
		if (!failures.isEmpty()) {
			System.out.println(failures.size() + " of " + total + " checks FAILED:");
			for (String[] f : failures)
				System.out.println("  " + f[0] + ": " + f[1]);
		} else {
			System.out.println("all " + total + " checks passed");
		}
		System.out.flush();
		if (hung)
			Runtime.getRuntime().halt(1);

		// Database.close (fdb_database_destroy) and FDB.stopNetwork (fdb_stop_network, then the
		// network thread's fdb_run_network returns)
		Thread watchdog = new Thread(() -> {
			sleep(30000);
			System.out.println("FAIL exit: fdb_stop_network/network thread did not finish in 30 s");
			System.out.flush();
			Runtime.getRuntime().halt(3);
		});
		watchdog.setDaemon(true);
		watchdog.start();
		db.close();
		fdb.stopNetwork();
		System.exit(failures.isEmpty() ? 0 : 1);
	}
}
