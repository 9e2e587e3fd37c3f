#!/usr/bin/env python3
# Smoke test for FoundationDB's official Python binding (7.3) running on a libfdb_c.so — here
# cfdb's. Uses only the binding's public API: fdb.api_version(730), fdb.open(cluster_file), the
# Database/Transaction/Future classes, fdb.tuple, fdb.Subspace, fdb.directory, fdb.locality and
# fdb.predicates. Every check prints one line (PASS/FAIL/SKIP); failures are collected and listed
# at the end, and the exit status is 1 if any check failed.
#
#   python3 tests/bindings/python_smoke.py --cluster-file FILE [--upstream-tests DIR] [--only TEXT]
#                                          [--verbose] [--layers-vectors DIR [--layers-record]]
#                                          [--layers-tool PATH]
#
# The binding (with its generated fdboptions.py/apiversion.py) must be on PYTHONPATH and the
# library on LD_LIBRARY_PATH; scripts/check-python-binding.sh sets all of that up. With
# --upstream-tests DIR (the binding's own bindings/python/tests), the functions FoundationDB's
# unit_tests.py runs are run too, each as one check. Keys used: b"pysmoke/...", the tuple
# subspace ("pysmoke",), the directory ("pysmoke",) and, from the upstream tests, b"foo", b"t1".. ,
# b"w0".., b"key1".., and for the layers cross-check b"layers/..." and the directories ("layers-py",),
# ("layers-c",) — meant for a scratch cluster.

import argparse
import base64
import json
import os
import re
import struct
import sys
import tempfile
import threading
import time
import traceback
import uuid

import fdb

fdb.api_version(730)  # before any @fdb.transactional below

PREFIX = b"pysmoke/"
CHECKS = []
VERBOSE = False


def check(timeout=60):
    def deco(fn):
        CHECKS.append((fn.__name__[len("check_"):], fn, timeout))
        return fn

    return deco


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def expect_eq(got, want, what):
    if got != want:
        raise AssertionError("%s: got %r, want %r" % (what, got, want))


def expect_error(code, fn, what):
    """fn() must raise fdb.FDBError(code)."""
    try:
        fn()
    except fdb.FDBError as e:
        if e.code != code:
            raise AssertionError("%s: got FDBError %d (%s), want %d" % (what, e.code, e.description, code))
        return
    raise AssertionError("%s: no error, want FDBError %d" % (what, code))


def all_of(*parts):
    """Runs every (name, fn) part; one AssertionError lists each part that failed."""
    errors = []
    for name, fn in parts:
        try:
            fn()
        except AssertionError as e:
            errors.append("%s: %s" % (name, e))
        except fdb.FDBError as e:
            errors.append("%s: FDBError %d" % (name, e.code))
    if errors:
        raise AssertionError(" | ".join(errors))


def wait_ready(future, seconds):
    deadline = time.time() + seconds
    while not future.is_ready():
        if time.time() > deadline:
            return False
        time.sleep(0.005)
    return True


def k(*parts):
    return PREFIX + b"/".join(p if isinstance(p, bytes) else str(p).encode() for p in parts)


def i64(n):
    return struct.pack("<q", n)


def from_i64(b):
    return struct.unpack("<q", bytes(b))[0]


@fdb.transactional
def clear_prefix(tr, prefix):
    tr.clear_range_startswith(prefix)


@fdb.transactional
def write_many(tr, items):
    for key, value in items:
        tr[key] = value


@fdb.transactional
def read_range(tr, begin, end, **kwargs):
    return [(kv.key, kv.value) for kv in tr.get_range(begin, end, **kwargs)]


# ---------------------------------------------------------------------------------------------
@check()
def check_library_and_api_version(db):
    expect_eq(fdb.get_api_version(), 730, "fdb.get_api_version()")
    expect_eq(fdb.LATEST_API_VERSION, 730, "fdb.LATEST_API_VERSION")
    expect(fdb.is_api_version_selected(), "is_api_version_selected")
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if re.search(r"lib(fdb_c|cfdb)\.so", path):
                libs.add(path)
    expect(len(libs) == 1, "exactly one fdb_c library mapped: %r" % libs)
    return "library " + libs.pop()


@check()
def check_transactional_decorator(db):
    @fdb.transactional
    def put(tr, key, value):
        tr[key] = value

    @fdb.transactional
    def get(tr, key):
        return tr[key].value

    @fdb.transactional
    def swap(tr, a, b):  # composes two transactional functions in one transaction
        va, vb = get(tr, a), get(tr, b)
        put(tr, a, vb)
        put(tr, b, va)
        return (va, vb)

    @fdb.transactional(parameter="t")
    def get_t(t, key):
        return t.get(key).value

    put(db, k("tx", "a"), b"1")
    put(db, k("tx", "b"), b"2")
    expect_eq(get(db, k("tx", "a")), b"1", "get after put")
    expect_eq(swap(db, k("tx", "a"), k("tx", "b")), (b"1", b"2"), "swap return value")
    expect_eq(get_t(db, k("tx", "a")), b"2", "parameter= decorator after swap")
    expect_eq(get(db, k("tx", "b")), b"1", "swapped b")

    # a Transaction passed in is used as-is and not committed
    tr = db.create_transaction()
    put(tr, k("tx", "c"), b"3")
    expect_eq(get(tr, k("tx", "c")), b"3", "read-your-writes through nested call")
    expect_eq(db[k("tx", "c")], None, "nested call does not commit")
    tr.commit().wait()
    expect_eq(db[k("tx", "c")], b"3", "after explicit commit")

    try:

        @fdb.transactional
        def gen(tr):
            yield 1

        gen(db)
        raise AssertionError("generator accepted by @fdb.transactional")
    except ValueError:
        pass


@check()
def check_get_set_clear(db):
    key, key2 = k("gsc", 1), k("gsc", 2)
    tr = db.create_transaction()
    tr.set(key, b"value")
    tr[key2] = b"v2"
    expect_eq(tr.get(key).value, b"value", "read own write")
    v = tr[key]
    expect(v.present() and v == b"value" and len(v) == 5, "Value future behaves like bytes")
    tr.commit().wait()
    expect(tr.get_committed_version() > 0, "committed version > 0")

    expect_eq(db[key], b"value", "db[key]")
    expect_eq(db.get(key2), b"v2", "db.get")
    tr = db.create_transaction()  # kept referenced: destroying a transaction cancels its reads
    missing = tr.get(k("gsc", "missing"))
    expect(not missing.present() and missing.value is None, "missing key -> None")

    db[key] = b"other"
    expect_eq(db[key], b"other", "db[key] = ...")
    db.set(key, b"set")
    expect_eq(db[key], b"set", "db.set")
    del db[key]
    expect_eq(db[key], None, "del db[key]")
    db.clear(key2)
    expect_eq(db[key2], None, "db.clear")

    tr = db.create_transaction()
    tr[key] = b"x"
    tr.clear(key)
    expect_eq(tr[key].value, None, "clear inside transaction")
    tr[key2] = b"copy-src"
    tr[key] = tr[key2]  # a Value future used as a value
    expect_eq(tr[key].value, b"copy-src", "Value future as value")
    del tr[key2]
    tr.commit().wait()
    expect_eq((db[key], db[key2]), (b"copy-src", None), "after commit")

    # clear with a KeySelector (the binding resolves it with get_key)
    tr = db.create_transaction()
    tr.clear(fdb.KeySelector.first_greater_or_equal(k("gsc", 0)))
    tr.commit().wait()
    expect_eq(db[key], None, "clear(KeySelector)")

    # empty value, binary keys and values
    db[k("gsc", b"\x00\xff")] = b""
    expect_eq(db[k("gsc", b"\x00\xff")], b"", "empty value is present")
    bin_value = bytes(range(256))
    db[k("gsc", b"\x01")] = bin_value
    expect_eq(db[k("gsc", b"\x01")], bin_value, "binary value")


@check()
def check_clear_range(db):
    keys = [k("cr", "%02d" % i) for i in range(10)]
    write_many(db, [(x, b"v") for x in keys])
    tr = db.create_transaction()
    tr.clear_range(keys[3], keys[6])
    expect_eq(len(list(tr.get_range(keys[0], k("cr", "99")))), 7, "clear_range in transaction (RYW)")
    tr.commit().wait()
    expect_eq([kv.key for kv in db.get_range(keys[0], k("cr", "99"))], keys[:3] + keys[6:], "after clear_range")

    del db[keys[0]:keys[2]]
    expect_eq(len(db.get_range(keys[0], k("cr", "99"))), 5, "del db[a:b]")
    db.clear_range(keys[6], keys[8])
    expect_eq([kv.key for kv in db[keys[0]:k("cr", "99")]], [keys[2], keys[8], keys[9]], "db.clear_range")

    tr = db.create_transaction()
    tr.clear_range(fdb.KeySelector.first_greater_than(keys[2]), fdb.KeySelector.first_greater_than(keys[8]))
    tr.commit().wait()
    expect_eq([kv.key for kv in db[keys[0]:k("cr", "99")]], [keys[2], keys[9]], "clear_range(KeySelectors)")

    db.clear_range_startswith(k("cr"))
    expect_eq(db.get_range_startswith(k("cr")), [], "clear_range_startswith")


@check()
def check_get_range(db):
    keys = [k("gr", "%03d" % i) for i in range(50)]
    vals = [b"v%d" % i for i in range(50)]
    write_many(db, list(zip(keys, vals)))
    b, e = keys[0], k("gr", "999")
    tr = db.create_transaction()
    allkv = [(kv.key, kv.value) for kv in tr.get_range(b, e)]
    expect_eq(allkv, list(zip(keys, vals)), "full range")
    expect_eq([kv.key for kv in tr.get_range(b, e, limit=10)], keys[:10], "limit=10")
    expect_eq([kv.key for kv in tr.get_range(b, e, reverse=True)], keys[::-1], "reverse")
    expect_eq([kv.key for kv in tr.get_range(b, e, limit=7, reverse=True)], keys[::-1][:7], "reverse limit=7")
    for name in ("want_all", "iterator", "small", "medium", "large", "serial"):
        mode = getattr(fdb.StreamingMode, name)
        got = [kv.key for kv in tr.get_range(b, e, streaming_mode=mode)]
        expect_eq(got, keys, "streaming mode %s" % name)
        got = [kv.key for kv in tr.get_range(b, e, limit=13, reverse=True, streaming_mode=mode)]
        expect_eq(got, keys[::-1][:13], "streaming mode %s reverse limit" % name)
    got = [kv.key for kv in tr.get_range(b, e, limit=20, streaming_mode=fdb.StreamingMode.exact)]
    expect_eq(got, keys[:20], "streaming mode exact")
    expect_eq([kv.key for kv in tr.get_range(b, e).to_list()], keys, "to_list")
    expect_eq([key for key, value in tr[b:e]], keys, "tr[b:e] and KeyValue unpacking")
    expect_eq([kv.key for kv in tr[b:e:-1]], keys[::-1], "tr[b:e:-1] is reverse")
    expect_eq([kv.key for kv in db[b:e]], keys, "db[b:e]")
    expect_eq([kv.key for kv in db.get_range(b, e, limit=3, reverse=True)], keys[::-1][:3], "db.get_range")
    expect_eq(list(tr.get_range(e, b)), [], "inverted range is empty")

    KS = fdb.KeySelector
    sel = lambda b_, e_: [kv.key for kv in tr.get_range(b_, e_)]
    expect_eq(sel(KS.first_greater_than(keys[5]), KS.first_greater_or_equal(keys[10])), keys[6:10], "fgt..fge")
    expect_eq(sel(KS.last_less_or_equal(keys[5]), KS.last_less_than(keys[10])), keys[5:9], "lle..llt")
    expect_eq(sel(KS.first_greater_or_equal(keys[5]) + 2, KS.first_greater_or_equal(keys[5]) + 5), keys[7:10], "+offset")
    expect_eq(sel(KS.last_less_than(keys[20]) - 3, keys[20]), keys[16:20], "-offset")
    expect_eq(sel(KS.first_greater_or_equal(keys[10]), KS.first_greater_or_equal(keys[10])), [], "empty selector range")

    gk = lambda s: tr.get_key(s).value
    expect_eq(gk(KS.first_greater_or_equal(keys[3])), keys[3], "get_key fge")
    expect_eq(gk(KS.first_greater_than(keys[3])), keys[4], "get_key fgt")
    expect_eq(gk(KS.last_less_than(keys[3])), keys[2], "get_key llt")
    expect_eq(gk(KS.last_less_or_equal(keys[3])), keys[3], "get_key lle")
    expect_eq(gk(KS.first_greater_or_equal(keys[3]) + 5), keys[8], "get_key fge+5")
    expect_eq(gk(KS.first_greater_or_equal(k("gr", "0055"))), keys[6], "get_key between keys")
    expect_eq(gk(KS.last_less_than(b"")), b"", "get_key before the first key")
    expect_eq(gk(KS.first_greater_or_equal(b"\xff")), b"\xff", "get_key past the last user key")
    expect_eq(db.get_key(KS.first_greater_than(keys[48])), keys[49], "db.get_key")

    # read-your-writes merged into ranges and selectors
    tr[k("gr", "005a")] = b"new"
    del tr[keys[6]]
    tr.clear_range(keys[40], keys[45])
    got = [kv.key for kv in tr.get_range(keys[4], keys[8])]
    expect_eq(got, [keys[4], keys[5], k("gr", "005a"), keys[7]], "RYW range merge")
    expect_eq(len(list(tr.get_range(b, e))), 50 + 1 - 1 - 5, "RYW full count")
    expect_eq(gk(KS.first_greater_than(keys[5])), k("gr", "005a"), "RYW get_key")
    expect_eq(gk(KS.last_less_than(keys[45])), keys[39], "RYW get_key over a cleared range")
    expect_eq([kv.key for kv in tr.get_range(keys[38], keys[47], reverse=True)],
              [keys[46], keys[45], keys[39], keys[38]], "RYW reverse over cleared range")


@check()
def check_get_range_large(db):
    n = 2000
    keys = [k("big", "%05d" % i) for i in range(n)]
    value = b"x" * 200
    for i in range(0, n, 500):
        write_many(db, [(x, value) for x in keys[i:i + 500]])
    b, e = k("big", ""), k("big", "~")
    tr = db.create_transaction()
    for name in ("want_all", "iterator", "small", "medium", "large", "serial"):
        mode = getattr(fdb.StreamingMode, name)
        got = [kv.key for kv in tr.get_range(b, e, streaming_mode=mode)]
        expect_eq((len(got), got == keys), (n, True), "%d keys in mode %s" % (n, name))
        got = [kv.key for kv in tr.get_range(b, e, reverse=True, limit=1500, streaming_mode=mode)]
        expect_eq((len(got), got == keys[::-1][:1500]), (1500, True), "reverse limit 1500 in mode %s" % name)
    got = tr.get_range(b, e, limit=1234, streaming_mode=fdb.StreamingMode.exact)
    expect_eq(len(list(got)), 1234, "exact mode, limit 1234")
    got = tr.snapshot.get_range(b, e, streaming_mode=fdb.StreamingMode.iterator)
    expect_eq(sum(1 for _ in got), n, "snapshot iterator")
    return "%d keys x %d bytes" % (n, len(value))


@check()
def check_get_range_startswith(db):
    write_many(db, [(k("sw", "a"), b"1"), (k("sw", "ab"), b"2"), (k("sw", "b"), b"3"), (k("sw2"), b"4")])
    tr = db.create_transaction()
    expect_eq([kv.value for kv in tr.get_range_startswith(k("sw", "a"))], [b"1", b"2"], "startswith a")
    expect_eq([kv.value for kv in tr.get_range_startswith(k("sw", ""))], [b"1", b"2", b"3"], "startswith sw/")
    expect_eq([kv.value for kv in tr.get_range_startswith(k("sw"), reverse=True, limit=2)], [b"4", b"3"],
              "startswith reverse limit")
    expect_eq([kv.value for kv in db.get_range_startswith(k("sw", "ab"))], [b"2"], "db.get_range_startswith")


@check()
def check_tuple_layer(db):
    T = fdb.tuple
    samples = [
        (), (None,), (b"bytes\x00with nul",), ("unicode \u00e9\u4e2d",), (0,), (1,), (-1,), (255,), (-256,),
        (2 ** 63 - 1,), (-(2 ** 63),), (2 ** 100,), (-(2 ** 100),), (True, False), (3.5,), (T.SingleFloat(1.25),),
        (uuid.UUID("12345678-1234-5678-1234-567812345678"),), ((1, (b"nested", None)), "x"),
        (T.Versionstamp(b"\x01" * 10, 5),),
    ]
    for t in samples:
        expect_eq(T.unpack(T.pack(t)), t, "tuple round trip %r" % (t,))
    ordered = [(-(2 ** 70),), (-5,), (-1,), (0,), (1,), (300,), (2 ** 70,)]
    expect_eq(sorted(ordered, key=T.pack), ordered, "integers sort by packed bytes")
    expect_eq(sorted([("b",), ("a", 1), ("a",)], key=T.pack), [("a",), ("a", 1), ("b",)], "prefix sorts first")
    expect(T.has_incomplete_versionstamp((T.Versionstamp(),)), "incomplete versionstamp detected")
    expect_eq(T.compare((1, "a"), (1, "b")), -1, "tuple.compare")

    @fdb.transactional
    def store(tr):
        for i in range(5):
            tr[T.pack(("pysmoke", "tuple", i, "x"))] = T.pack((i * i,))

    store(db)
    r = T.range(("pysmoke", "tuple"))
    tr = db.create_transaction()
    got = [(T.unpack(kv.key), T.unpack(kv.value)) for kv in tr[r]]
    expect_eq(got, [(("pysmoke", "tuple", i, "x"), (i * i,)) for i in range(5)], "tuple-keyed range read")
    expect_eq(T.unpack(tr[T.pack(("pysmoke", "tuple", 3, "x"))].value), (9,), "tuple point read")


@check()
def check_subspace(db):
    s = fdb.Subspace(("pysmoke", "sub"))
    expect_eq(s.key(), fdb.tuple.pack(("pysmoke", "sub")), "Subspace.key")
    expect_eq(s.unpack(s.pack((1, "a"))), (1, "a"), "pack/unpack")
    child = s["child"]
    expect_eq(child.key(), s.pack(("child",)), "s['child']")
    expect(s.contains(child.pack((5,))) and not child.contains(s.pack((5,))), "contains")
    raw = fdb.Subspace(rawPrefix=k("rawsub", ""))
    expect_eq(raw.pack((1,)), k("rawsub", "") + fdb.tuple.pack((1,)), "raw_prefix")

    @fdb.transactional
    def fill(tr):
        for i in range(5):
            tr[child.pack((i,))] = b"%d" % i
        tr[s.pack(("other",))] = b"o"

    fill(db)
    tr = db.create_transaction()
    expect_eq([child.unpack(kv.key) for kv in tr[child.range()]], [(i,) for i in range(5)], "child.range()")
    expect_eq(len(list(tr[s.range()])), 6, "s.range()")
    expect_eq(tr[child[3]].value, b"3", "subspace as a key (as_foundationdb_key)")
    below = child.range((2,))
    expect_eq(list(tr.get_range(below.start, below.stop)), [], "range below a leaf tuple is empty")
    del tr[child.range()]
    tr.commit().wait()
    expect_eq(len(db[s.range()]), 1, "clear child range")


@check()
def check_directory_layer(db):
    D = fdb.directory
    root = ("pysmoke", "dir")
    D.remove_if_exists(db, root)
    a = D.create_or_open(db, root + ("a",))
    expect_eq(a.get_path(), root + ("a",), "path of a")
    a2 = D.create_or_open(db, root + ("a",))
    expect_eq(a2.key(), a.key(), "create_or_open returns the same prefix")
    b = D.create(db, root + ("b",), layer=b"mylayer")
    expect_eq(b.get_layer(), b"mylayer", "layer")
    try:
        D.create(db, root + ("a",))
        raise AssertionError("create of an existing directory succeeded")
    except ValueError:
        pass
    try:
        D.open(db, root + ("b",), layer=b"otherlayer")
        raise AssertionError("open with the wrong layer succeeded")
    except ValueError:
        pass
    expect_eq(D.open(db, root + ("b",), layer=b"mylayer").key(), b.key(), "open with layer")
    expect_eq(sorted(D.list(db, root)), ["a", "b"], "list")
    expect(D.exists(db, root + ("a",)), "exists a")

    db[a.pack(("x",))] = b"in a"
    c = D.move(db, root + ("a",), root + ("c",))
    expect_eq(c.get_path(), root + ("c",), "moved path")
    expect_eq(c.key(), a.key(), "move keeps the prefix")
    expect_eq(sorted(D.list(db, root)), ["b", "c"], "list after move")
    expect(not D.exists(db, root + ("a",)), "a gone after move")
    expect_eq(db[c.pack(("x",))], b"in a", "data follows the move")
    d = c.move_to(db, root + ("d",))
    expect_eq(d.get_path(), root + ("d",), "DirectorySubspace.move_to")

    sub = d.create_or_open(db, ("nested", "deeper"))
    expect_eq(sub.get_path(), root + ("d", "nested", "deeper"), "nested path")
    expect_eq(d.list(db), ["nested"], "list from a DirectorySubspace")

    p = D.create(db, root + ("part",), layer=b"partition")
    inner = p.create_or_open(db, ("inner",))
    expect_eq(inner.get_path(), root + ("part", "inner"), "path inside a partition")
    expect_eq(D.open(db, root + ("part", "inner")).key(), inner.key(), "open through the partition")
    expect_eq(p.list(db), ["inner"], "partition list")
    try:
        D.move(db, root + ("part", "inner"), root + ("outside",))
        raise AssertionError("move out of a partition succeeded")
    except ValueError:
        pass

    D.remove(db, root + ("d",))
    expect(not D.exists(db, root + ("d",)), "removed")
    expect_eq(db[c.pack(("x",))], None, "contents removed")
    expect(not D.remove_if_exists(db, root + ("d",)), "remove_if_exists on a missing directory")
    try:
        D.remove(db, root + ("d",))
        raise AssertionError("remove of a missing directory succeeded")
    except ValueError:
        pass

    # a private directory layer in its own key space, used inside one transaction
    dl = fdb.DirectoryLayer(node_subspace=fdb.Subspace(rawPrefix=k("dl", "\xfe")),
                            content_subspace=fdb.Subspace(rawPrefix=k("dl", "")))
    tr = db.create_transaction()
    x = dl.create_or_open(tr, ("x",))
    y = dl.create_or_open(tr, ("y",))
    expect(x.key() != y.key(), "distinct prefixes from the allocator")
    tr.commit().wait()
    expect_eq(dl.list(db), ["x", "y"], "private DirectoryLayer list")
    D.remove(db, root)
    expect(not D.exists(db, root), "root removed")


@check()
def check_atomic_ops(db):
    K = lambda n: k("atomic", n)
    tr = db.create_transaction()
    tr.add(K("add"), i64(5))
    tr.add(K("add"), i64(5))
    expect_eq(from_i64(tr[K("add")]), 10, "add read in the same transaction")
    tr.add(K("add"), i64(-3))
    tr[K("and")] = b"\x0c"
    tr[K("or")] = b"\x0c"
    tr[K("xor")] = b"\x0c"
    tr[K("max")] = i64(5)
    tr[K("min")] = i64(5)
    tr[K("bmin")] = b"mmm"
    tr[K("bmax")] = b"mmm"
    tr[K("app")] = b"ab"
    tr[K("cac1")] = b"same"
    tr[K("cac2")] = b"diff"
    tr[K("trunc")] = i64(2 ** 40 + 1)
    tr.commit().wait()

    tr = db.create_transaction()
    tr.bit_and(K("and"), b"\x0a")
    tr.bit_or(K("or"), b"\x0a")
    tr.bit_xor(K("xor"), b"\x0a")
    tr.max(K("max"), i64(3))
    tr.min(K("min"), i64(2))
    tr.max(K("max-missing"), i64(4))
    tr.min(K("min-missing"), i64(4))
    tr.bit_and(K("and-missing"), b"\x0f")
    tr.byte_min(K("bmin"), b"abc")
    tr.byte_max(K("bmax"), b"zz")
    tr.append_if_fits(K("app"), b"cd")
    tr.compare_and_clear(K("cac1"), b"same")
    tr.compare_and_clear(K("cac2"), b"same")
    tr.add(K("trunc"), b"\x01\x00\x00\x00")  # param shorter: the existing value is truncated
    tr.commit().wait()
    db.add(K("add"), i64(100))  # Database shortcut
    db.bit_xor(K("xor"), b"\xff")

    tr = db.create_transaction()
    expect_eq(from_i64(tr[K("add")]), 107, "add")
    expect_eq(tr[K("and")].value, b"\x08", "bit_and")
    expect_eq(tr[K("or")].value, b"\x0e", "bit_or")
    expect_eq(tr[K("xor")].value, bytes([0x06 ^ 0xff]), "bit_xor (twice)")
    expect_eq(from_i64(tr[K("max")]), 5, "max")
    expect_eq(from_i64(tr[K("min")]), 2, "min")
    expect_eq(from_i64(tr[K("max-missing")]), 4, "max on a missing key")
    expect_eq(from_i64(tr[K("min-missing")]), 4, "min on a missing key")
    expect_eq(tr[K("and-missing")].value, b"\x0f", "bit_and on a missing key")
    expect_eq(tr[K("bmin")].value, b"abc", "byte_min")
    expect_eq(tr[K("bmax")].value, b"zz", "byte_max")
    expect_eq(tr[K("app")].value, b"abcd", "append_if_fits")
    expect_eq(tr[K("cac1")].value, None, "compare_and_clear (equal)")
    expect_eq(tr[K("cac2")].value, b"diff", "compare_and_clear (different)")
    expect_eq(tr[K("trunc")].value, b"\x02\x00\x00\x00", "add with a shorter param")
    # max/min compare little-endian: 0x0100 (256) > 0x00ff (255)
    tr[K("le")] = b"\x00\x01"
    tr.max(K("le"), b"\xff\x00")
    expect_eq(tr[K("le")].value, b"\x00\x01", "max is little-endian (RYW)")
    tr.commit().wait()
    expect_eq(db[K("le")], b"\x00\x01", "max is little-endian (stored)")


@check()
def check_versionstamps(db):
    T = fdb.tuple
    vss = fdb.Subspace(("pysmoke", "vs"))
    vkey = k("vs", "value")

    @fdb.transactional
    def write(tr, user_version):
        tr.set_versionstamped_key(vss.pack_with_versionstamp((T.Versionstamp(user_version=user_version), "k")), b"v")
        tr.set_versionstamped_value(vkey, T.pack_with_versionstamp(("prefix", T.Versionstamp(), "suffix")))
        return tr.get_versionstamp()

    tr = db.create_transaction()
    f = write(tr, 7)
    expect_error(1036, lambda: tr[vkey].value, "reading a versionstamped value in its transaction (accessed_unreadable)")
    tr.reset()
    f = write(db, 7)
    vs1 = f.value
    expect_eq(len(vs1), 10, "versionstamp length")
    f2 = write(db, 8)
    vs2 = f2.value
    expect(vs2 > vs1, "versionstamps increase")

    tr = db.create_transaction()
    rows = [vss.unpack(kv.key) for kv in tr[vss.range()]]
    expect_eq(len(rows), 2, "two versionstamped keys")
    v0, v1 = rows[0][0], rows[1][0]
    expect(v0.is_complete() and v0.tr_version == vs1 and v0.user_version == 7, "first key %r" % (v0,))
    expect(v1.tr_version == vs2 and v1.user_version == 8, "second key %r" % (v1,))
    value = T.unpack(tr[vkey].value)
    expect_eq(value, ("prefix", T.Versionstamp(vs2, 0), "suffix"), "versionstamped value")

    # committed version = first 8 bytes of the versionstamp
    tr = db.create_transaction()
    tr.set_versionstamped_value(k("vs", "raw"), b"\x00" * 10 + b"tail" + struct.pack("<I", 0))
    vsf = tr.get_versionstamp()
    tr.commit().wait()
    vs3 = vsf.value
    expect_eq(int.from_bytes(vs3[:8], "big"), tr.get_committed_version(), "versionstamp vs committed version")
    expect_eq(db[k("vs", "raw")], vs3 + b"tail", "raw versionstamped value")

    # read-only transaction: no commit version, get_versionstamp fails with 2021
    tr = db.create_transaction()
    tr[vkey].wait()
    vsf = tr.get_versionstamp()
    tr.commit().wait()
    expect_eq(tr.get_committed_version(), -1, "read-only committed version")
    expect_error(2021, lambda: vsf.value, "get_versionstamp of a read-only transaction")

    # an invalid offset is reported at commit (client_invalid_operation)
    tr = db.create_transaction()
    tr.set_versionstamped_value(k("vs", "bad"), b"abc")
    expect_error(2000, lambda: tr.commit().wait(), "versionstamped value shorter than 4 bytes")


@check(timeout=90)
def check_watches(db):
    key = k("watch", "a")
    db[key] = b"0"

    @fdb.transactional
    def make_watch(tr, key):
        return tr.watch(key)

    w = make_watch(db, key)
    fired = threading.Event()
    w.on_ready(lambda f: fired.set())
    time.sleep(0.5)
    expect(not w.is_ready(), "watch fired without a change")
    db[key] = b"1"  # a change from another transaction
    expect(wait_ready(w, 15), "watch did not fire within 15 s after a change")
    w.wait()
    expect(fired.wait(5), "on_ready callback ran")

    # the Database shortcuts
    value, w2 = db.get_and_watch(key)  # (its value future: see commit_waits_for_reads)
    w3 = db.set_and_watch(k("watch", "b"), b"x")
    w4 = db.clear_and_watch(k("watch", "c"))
    time.sleep(0.3)
    expect(not (w2.is_ready() or w3.is_ready() or w4.is_ready()), "shortcut watches fired too early")
    db[key] = b"2"
    db[k("watch", "b")] = b"y"
    db[k("watch", "c")] = b"z"
    for name, f in (("get_and_watch", w2), ("set_and_watch", w3), ("clear_and_watch", w4)):
        expect(wait_ready(f, 15), "%s watch did not fire" % name)
        f.wait()
    expect_eq(fdb.Future.wait_for_any(make_watch(db, key), db.get_and_watch(key)[1], w), 2, "wait_for_any")

    # cancel -> operation_cancelled
    w5 = make_watch(db, key)
    w5.cancel()
    expect_error(1101, w5.wait, "cancelled watch")

    # a watch set by a transaction that does not commit ends with an error, not a hang
    tr = db.create_transaction()
    w6 = tr.watch(key)
    tr.cancel()
    expect(wait_ready(w6, 10), "watch of a cancelled transaction did not become ready")
    try:
        w6.wait()
        raise AssertionError("watch of a cancelled transaction succeeded")
    except fdb.FDBError as e:
        expect(e.code in (1025, 1101), "watch of a cancelled transaction: error %d" % e.code)


@check()
def check_snapshot_reads(db):
    k1, k2 = k("snap", 1), k("snap", 2)
    db[k1] = b"a"
    tr1 = db.create_transaction()
    expect_eq(tr1.snapshot.get(k1).value, b"a", "snapshot get")
    expect_eq(tr1.snapshot[k1].value, b"a", "snapshot[]")
    expect_eq(len(list(tr1.snapshot.get_range(k1, k("snap", 3)))), 1, "snapshot get_range")
    expect_eq(tr1.snapshot.get_key(fdb.KeySelector.first_greater_or_equal(k1)).value, k1, "snapshot get_key")
    db[k1] = b"b"  # conflicting write by another transaction
    tr1[k2] = b"x"
    tr1.commit().wait()  # a snapshot read adds no read conflict

    tr = db.create_transaction()
    tr[k1] = b"mine"
    expect_eq(tr.snapshot[k1].value, b"mine", "snapshot reads see own writes by default")
    tr2 = db.create_transaction()
    tr2.options.set_snapshot_ryw_disable()
    tr2[k1] = b"mine"
    expect_eq(tr2.snapshot[k1].value, b"b", "snapshot_ryw_disable")
    expect_eq(tr2[k1].value, b"mine", "non-snapshot read still sees own write")


@check()
def check_conflicts(db):
    key, other = k("conf", "k"), k("conf", "other")
    db[key] = b"0"

    tr1 = db.create_transaction()
    tr1[key].wait()
    tr1[other] = b"x"
    db[key] = b"changed"
    try:
        tr1.commit().wait()
        raise AssertionError("conflicting commit succeeded")
    except fdb.FDBError as e:
        expect_eq(e.code, 1020, "conflict error code")
        expect(fdb.predicates.is_retryable(e), "1020 is retryable")
        tr1.on_error(e).wait()  # retryable: returns after a backoff, transaction reset
    expect_eq(tr1[other].value, None, "on_error reset the transaction")

    # @fdb.transactional retries after a conflict
    db[key] = b"10"
    attempts = [0]

    @fdb.transactional
    def incr(tr):
        attempts[0] += 1
        v = int(tr[key].value)
        if attempts[0] == 1:
            db[key] = b"100"  # interfere once
        tr[key] = b"%d" % (v + 1)

    incr(db)
    expect_eq(attempts[0], 2, "attempts")
    expect_eq(db[key], b"101", "value after retry")

    # explicit conflict ranges
    tr1 = db.create_transaction()
    tr1.get_read_version().wait()  # conflict ranges are checked from the read version on
    tr1.add_read_conflict_key(key)
    tr1[other] = b"y"
    db[key] = b"z"
    expect_error(1020, lambda: tr1.commit().wait(), "add_read_conflict_key")
    tr1 = db.create_transaction()
    tr1[other].wait()
    tr2 = db.create_transaction()
    tr2.add_write_conflict_range(k("conf", "o"), k("conf", "p"))
    tr2.commit().wait()
    tr1[key] = b"w"
    expect_error(1020, lambda: tr1.commit().wait(), "add_write_conflict_range")
    tr1 = db.create_transaction()
    tr1.get_read_version().wait()
    tr1.add_read_conflict_range(k("conf", "a"), k("conf", "z"))
    tr1[other] = b"y"
    tr2 = db.create_transaction()
    tr2.add_write_conflict_key(key)
    tr2.commit().wait()
    expect_error(1020, lambda: tr1.commit().wait(), "add_read_conflict_range + add_write_conflict_key")

    # next_write_no_write_conflict_range: this write does not conflict with a reader
    tr1 = db.create_transaction()
    tr1[key].wait()
    tr1[other] = b"y"
    tr2 = db.create_transaction()
    tr2.options.set_next_write_no_write_conflict_range()
    tr2[key] = b"quiet"
    tr2.commit().wait()
    tr1.commit().wait()

    # report_conflicting_keys
    tr1 = db.create_transaction()
    tr1.options.set_report_conflicting_keys()
    tr1[key].wait()
    tr1[other] = b"y"
    db[key] = b"loud"
    expect_error(1020, lambda: tr1.commit().wait(), "conflict with report_conflicting_keys")
    ck = b"\xff\xff/transaction/conflicting_keys/"
    rows = [(kv.key, kv.value) for kv in tr1.get_range(ck, ck + b"\xff")]
    expect_eq(rows, [(ck + key, b"1"), (ck + key + b"\x00", b"0")], "conflicting_keys special keys")

    # concurrent read-modify-write from several threads
    counter = k("conf", "counter")
    db[counter] = b"0"

    @fdb.transactional
    def bump(tr):
        tr[counter] = b"%d" % (int(tr[counter].value) + 1)

    errors = []

    def worker():
        try:
            for _ in range(15):
                bump(db)
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    expect(not errors, "worker errors: %r" % errors)
    expect_eq(db[counter], b"60", "4 threads x 15 increments")


@check()
def check_transaction_options(db):
    key = k("opt", "k")
    db[key] = b"db"

    # timeout -> transaction_timed_out, not retryable
    tr = db.create_transaction()
    tr.options.set_timeout(1)
    time.sleep(0.1)
    expect_error(1031, lambda: tr[key].value, "get after the timeout")
    expect_error(1031, lambda: tr.commit().wait(), "commit after the timeout")
    expect_error(1031, lambda: tr.on_error(fdb.FDBError(1031)).wait(), "on_error(1031)")
    tr.reset()
    expect_eq(tr[key].value, b"db", "reset clears the timeout")

    # retry_limit
    tr = db.create_transaction()
    tr.options.set_retry_limit(1)
    tr.on_error(fdb.FDBError(1020)).wait()
    expect_error(1020, lambda: tr.on_error(fdb.FDBError(1020)).wait(), "second on_error with retry_limit 1")

    attempts = [0]

    @fdb.transactional
    def always_conflicts(tr):
        tr.options.set_retry_limit(2)
        attempts[0] += 1
        raise fdb.FDBError(1020)

    expect_error(1020, lambda: always_conflicts(db), "@transactional with retry_limit")
    expect_eq(attempts[0], 3, "attempts with retry_limit 2")

    # size_limit -> transaction_too_large
    tr = db.create_transaction()
    tr.options.set_size_limit(1000)
    tr[key] = b"a" * 2000
    expect_error(2101, lambda: tr.commit().wait(), "size_limit 1000")

    # read_your_writes_disable
    tr = db.create_transaction()
    tr.options.set_read_your_writes_disable()
    tr[key] = b"new"
    expect_eq(tr[key].value, b"db", "read_your_writes_disable reads the database")

    # system keys
    tr = db.create_transaction()
    expect_error(2004, lambda: tr[b"\xff/pysmoke"].value, "read of a system key without read_system_keys")
    tr = db.create_transaction()
    tr.options.set_read_system_keys()
    expect_eq(tr[b"\xff/pysmoke"].value, None, "read of a system key with read_system_keys")
    tr = db.create_transaction()
    tr[b"\xff/pysmoke"] = b"x"
    expect_error(2004, lambda: tr.commit().wait(), "write of a system key without access_system_keys")

    # key and value size limits
    tr = db.create_transaction()
    tr[k("opt", "v")] = b"v" * 100000
    tr.commit().wait()
    expect_eq(len(db[k("opt", "v")]), 100000, "100000-byte value")
    tr = db.create_transaction()
    tr[k("opt", "v")] = b"v" * 100001
    expect_error(2103, lambda: tr.commit().wait(), "value_too_large")
    tr = db.create_transaction()
    tr[b"k" * 10001] = b""
    expect_error(2102, lambda: tr.commit().wait(), "key_too_large")

    # options that are accepted and keep the transaction working
    @fdb.transactional
    def many_options(tr):
        tr.options.set_causal_read_risky()
        tr.options.set_causal_write_risky()
        tr.options.set_priority_batch()
        tr.options.set_priority_system_immediate()
        tr.options.set_max_retry_delay(100)
        tr.options.set_lock_aware()
        tr.options.set_read_lock_aware()
        tr.options.set_debug_transaction_identifier("pysmoke")
        tr.options.set_log_transaction()
        tr.options.set_transaction_logging_max_field_length(1000)
        tr.options.set_tag("pysmoke")
        tr.options.set_auto_throttle_tag("pysmoke2")
        tr.options.set_used_during_commit_protection_disable()
        tr.options.set_include_port_in_address()
        tr.options.set_snapshot_ryw_enable()
        tr.options.set_read_priority_normal()
        tr.options.set_read_server_side_cache_enable()
        tr[key] = b"opts"
        return tr[key].value

    expect_eq(many_options(db), b"opts", "transaction with many options")


@check()
def check_long_keys(db):
    # ReadYourWritesTransaction::get: a key longer than any stored key is absent, no error;
    # ::watch: key_too_large
    long_key = b"k" * 20000
    tr = db.create_transaction()
    all_of(("get of a 20000-byte key", lambda: expect_eq(tr[long_key].value, None, "value")),
           ("get_key of a 20000-byte key",
            lambda: tr.get_key(fdb.KeySelector.first_greater_or_equal(long_key)).value),
           ("get_range up to a 20000-byte key", lambda: list(tr.get_range(PREFIX, PREFIX + long_key))),
           ("watch of a 20000-byte key", lambda: expect_error(2102, lambda: tr.watch(long_key).wait(), "watch")))


@check()
def check_database_options(db):
    key = k("dbopt", "k")
    db[key] = b"v"
    db.options.set_location_cache_size(100001)
    db.options.set_max_watches(10000)
    db.options.set_datacenter_id("dc1")
    db.options.set_machine_id("machine1")
    db.options.set_transaction_logging_max_field_length(1000)
    db.options.set_transaction_max_retry_delay(1000)
    db.options.set_transaction_causal_read_risky()
    db.options.set_transaction_include_port_in_address()
    db.options.set_snapshot_ryw_disable()
    db.options.set_snapshot_ryw_enable()
    expect_eq(db[key], b"v", "database usable after options")

    db.options.set_transaction_timeout(1)
    try:
        tr = db.create_transaction()
        time.sleep(0.1)
        expect_error(1031, lambda: tr[key].value, "database transaction_timeout")
    finally:
        db.options.set_transaction_timeout(0)
    expect_eq(db[key], b"v", "timeout cleared")

    db.options.set_transaction_size_limit(1000)
    try:
        tr = db.create_transaction()
        tr[key] = b"x" * 2000
        expect_error(2101, lambda: tr.commit().wait(), "database transaction_size_limit")
    finally:
        db.options.set_transaction_size_limit(10000000)

    db.options.set_transaction_retry_limit(0)
    try:
        tr = db.create_transaction()
        expect_error(1020, lambda: tr.on_error(fdb.FDBError(1020)).wait(), "database transaction_retry_limit 0")
    finally:
        db.options.set_transaction_retry_limit(-1)
    tr = db.create_transaction()
    tr.on_error(fdb.FDBError(1020)).wait()


@check()
def check_error_predicates(db):
    E = fdb.FDBError
    P = fdb.predicates
    # fdb_c.cpp fdb_error_predicate
    not_committed = [1020, 1007, 1009, 1038, 1078, 1042, 1051, 1037, 1213, 1223]
    maybe = [1021, 1039]
    for c in not_committed:
        expect(P.is_retryable(E(c)) and P.is_retryable_not_committed(E(c)) and not P.is_maybe_committed(E(c)),
               "predicates for %d" % c)
    for c in maybe:
        expect(P.is_retryable(E(c)) and P.is_maybe_committed(E(c)) and not P.is_retryable_not_committed(E(c)),
               "predicates for %d" % c)
    for c in (1031, 1025, 2101, 2004, 1101, 10, 4100):
        expect(not (P.is_retryable(E(c)) or P.is_maybe_committed(E(c)) or P.is_retryable_not_committed(E(c))),
               "predicates for %d" % c)
    expect_eq(E(1020).description, b"Transaction not committed due to conflict with another transaction",
              "FDBError.description")
    expect_eq(E(2101).description, b"Transaction exceeds byte limit", "description 2101")
    expect(str(E(1031)).endswith("(1031)"), "str(FDBError)")
    expect_eq(repr(E(1007)), "FDBError(1007)", "repr(FDBError)")
    # on_error of a non-retryable error hands it back
    tr = db.create_transaction()
    expect_error(2004, lambda: tr.on_error(E(2004)).wait(), "on_error(2004)")
    tr = db.create_transaction()
    tr.on_error(E(1021)).wait()  # maybe-committed is retryable


@check()
def check_read_versions(db):
    key = k("rv", "k")
    db[key] = b"old"
    tr0 = db.create_transaction()
    rv0 = tr0.get_read_version().wait()
    expect(rv0 > 0, "read version > 0")
    db[key] = b"new"
    tr = db.create_transaction()
    tr.set_read_version(rv0)
    expect_eq(tr.get_read_version().wait(), rv0, "get_read_version after set_read_version")
    expect_eq(tr[key].value, b"old", "read at an older version (MVCC)")
    tr2 = db.create_transaction()
    expect_eq(tr2[key].value, b"new", "current read")
    expect(tr2.get_read_version().wait() > rv0, "read versions advance")

    tr = db.create_transaction()
    tr[key] = b"newer"
    tr.commit().wait()
    cv = tr.get_committed_version()
    expect(cv > rv0, "committed version > earlier read version")
    tr = db.create_transaction()
    expect(tr.get_read_version().wait() >= cv, "read version after a commit >= its commit version")

    # a stale read version and a conflicting write -> 1020; a far-future one -> future_version
    tr = db.create_transaction()
    tr.set_read_version(rv0)
    tr[key].wait()
    tr[k("rv", "o")] = b"x"
    expect_error(1020, lambda: tr.commit().wait(), "commit at an old read version after a newer write")
    tr = db.create_transaction()
    tr.set_read_version(rv0 + 10 ** 12)
    expect_error(1009, lambda: tr[key].value, "read at a future version")
    deadline = time.time() + 15
    while True:  # versions advance 1e6/s; a fresh server has nothing 6 s old yet
        tr = db.create_transaction()
        rv = tr.get_read_version().wait()
        if rv > 7000000 or time.time() > deadline:
            break
        time.sleep(0.2)
    tr = db.create_transaction()
    tr.set_read_version(rv - 6000000)
    expect_error(1007, lambda: tr[key].value, "read 6 s (6e6 versions) back (transaction_too_old)")


@check()
def check_estimates_and_split_points(db):
    b, e = k("big", ""), k("big", "~")
    tr = db.create_transaction()
    size = tr.get_estimated_range_size_bytes(b, e).wait()
    expect(isinstance(size, int) and size >= 0, "estimated size %r" % size)
    empty = tr.get_estimated_range_size_bytes(k("nothing", ""), k("nothing", "~")).wait()
    expect(empty >= 0, "estimate of an empty range")
    pts = tr.get_range_split_points(b, e, 10000).wait()
    expect(len(pts) >= 2 and pts[0] == b and pts[-1] == e, "split points start/end %r" % pts[:3])
    expect(all(pts[i] < pts[i + 1] for i in range(len(pts) - 1)), "split points ascending")
    try:
        tr.get_range_split_points(b, e, 0)
        rejected = False
    except fdb.FDBError:
        raise
    except Exception:
        rejected = True
    expect(rejected, "chunk size 0 rejected by the binding")
    return "estimated %d bytes for ~420 kB, %d split points at 10 kB" % (size, len(pts))


@check()
def check_approximate_size(db):
    @fdb.transactional
    def sizes(tr):
        tr[k("as", 1)] = b"value1"
        s1 = tr.get_approximate_size().wait()
        tr[k("as", 2)] = b"value2"
        s2 = tr.get_approximate_size().wait()
        tr.clear(k("as", 3))
        s3 = tr.get_approximate_size().wait()
        tr.add_read_conflict_key(k("as", 4))
        s4 = tr.get_approximate_size().wait()
        tr.add_write_conflict_key(k("as", 5))
        s5 = tr.get_approximate_size().wait()
        return [s1, s2, s3, s4, s5]

    s = sizes(db)
    expect(0 < s[0] < s[1] < s[2] < s[3] < s[4], "approximate sizes increase: %r" % s)
    return "sizes %r" % s


@check()
def check_locality(db):
    key = k("loc", "k")
    db[key] = b"v"
    addrs = fdb.locality.get_addresses_for_key(db, key).wait()
    expect(len(addrs) >= 1, "at least one address")
    for a in addrs:
        expect(re.match(rb"^\d+\.\d+\.\d+\.\d+:\d+(:tls)?$", a), "address format %r" % a)
    tr = db.create_transaction()
    expect_eq(sorted(fdb.locality.get_addresses_for_key(tr, key).wait()), sorted(addrs), "with a Transaction")
    boundaries = list(fdb.locality.get_boundary_keys(db, b"", b"\xff"))
    expect(len(boundaries) >= 1 and boundaries[0] == b"", "boundary keys start with b'': %r" % boundaries[:3])
    expect(all(boundaries[i] < boundaries[i + 1] for i in range(len(boundaries) - 1)), "boundaries ascending")
    tr = db.create_transaction()
    expect_eq(list(fdb.locality.get_boundary_keys(tr, b"", b"\xff")), boundaries, "get_boundary_keys(tr)")
    return "addresses %s, %d shard boundaries" % (b",".join(addrs).decode(), len(boundaries))


@check()
def check_special_keys(db):
    status = json.loads(db[b"\xff\xff/status/json"])
    expect("client" in status and "cluster" in status, "status/json has client and cluster")
    expect(status["client"].get("database_status", {}).get("available") is True,
           "client.database_status.available: %r" % status["client"].get("database_status"))
    tr = db.create_transaction()
    cs = tr[b"\xff\xff/connection_string"].value
    expect(cs is not None and b"@" in cs, "connection_string %r" % cs)
    client = json.loads(db.get_client_status().wait())
    expect(client.get("Healthy") is True, "get_client_status Healthy")
    return "status/json %d bytes" % len(json.dumps(status))


@check()
def check_transaction_lifecycle(db):
    key = k("life", "k")
    db[key] = b"v"
    tr = db.create_transaction()
    tr[key] = b"changed"
    tr.reset()
    expect_eq(tr[key].value, b"v", "reset drops writes")
    tr.commit().wait()
    expect_eq(db[key], b"v", "read-only commit")

    tr = db.create_transaction()
    tr[key] = b"x"
    tr.cancel()
    expect_error(1025, lambda: tr.commit().wait(), "commit after cancel")
    expect_error(1025, lambda: tr[key].value, "get after cancel")
    expect_error(1025, lambda: tr.on_error(fdb.FDBError(1020)).wait(), "on_error after cancel")
    tr.reset()
    tr.commit().wait()

    # futures: is_ready / on_ready / block_until_ready / done / result / exception
    tr = db.create_transaction()
    f = tr.get(key)
    f.block_until_ready()
    expect(f.is_ready() and f.done(), "ready after block_until_ready")
    expect_eq(f.result(), b"v", "Future.result")
    got = []
    ev = threading.Event()
    f2 = tr.get_read_version()
    f2.on_ready(lambda fut: (got.append(fut.wait()), ev.set()))
    expect(ev.wait(10) and got[0] > 0, "on_ready callback with the read version")
    tr.options.set_timeout(1)
    time.sleep(0.05)
    f3 = tr.get(k("life", "other"))
    f3.block_until_ready()
    expect(isinstance(f3.exception(), fdb.FDBError) and f3.exception().code == 1031, "Future.exception")

    # a transaction can be reused after commit via reset
    tr = db.create_transaction()
    tr[key] = b"1"
    tr.commit().wait()
    tr.reset()
    tr[key] = b"2"
    tr.commit().wait()
    expect_eq(db[key], b"2", "reuse after reset")


@check()
def check_commit_waits_for_reads(db):
    # RYWImpl::commit waits for the transaction's outstanding reads (ryw->reading) before it
    # commits, and fails with a read's error; @fdb.transactional and Database.get_and_watch
    # return read futures that are only looked at after the commit and the transaction's end
    # (and ~ReadYourWritesTransaction fails reads still in flight with 1025).
    keys = [k("cwr", i) for i in range(20)]
    write_many(db, [(x, b"v%d" % i) for i, x in enumerate(keys)])

    def commit_right_after_get(writes):
        not_ready, values = 0, []
        for i in range(20):
            tr = db.create_transaction()
            f = tr.get(keys[i])
            if writes:
                tr[k("cwr", "w")] = b"x"
            tr.commit().wait()
            not_ready += not f.is_ready()
            del tr  # fdb_transaction_destroy, as when a @transactional function returns
            try:
                values.append(f.value)
            except fdb.FDBError as e:
                values.append(e.code)
        bad = sum(1 for v in values if not isinstance(v, bytes))
        expect_eq((not_ready, bad), (0, 0), "(reads not ready after commit, reads failed after destroy) of 20")

    @fdb.transactional
    def lazy_read(tr, key):
        return tr[key]  # a Value future, used after the commit

    def transactional_read():
        got = []
        for x in keys:
            try:
                got.append(lazy_read(db, x).value)
            except fdb.FDBError as e:
                got.append(e.code)
        expect_eq(got, [b"v%d" % i for i in range(20)], "values")

    def get_and_watch():
        got = []
        for x in keys:
            value, w = db.get_and_watch(x)
            try:
                got.append(value.value)
            except fdb.FDBError as e:
                got.append(e.code)
            w.cancel()
        expect_eq(got, [b"v%d" % i for i in range(20)], "values")

    def failed_read(writes):
        tr = db.create_transaction()
        tr.set_read_version(0x7FFFFFFFFFFFFFF0)
        f = tr.get(keys[0])
        if writes:
            tr[k("cwr", "w")] = b"y"
        expect_error(1009, lambda: tr.commit().wait(), "commit")
        del f

    all_of(("read-only commit issued right after a get", lambda: commit_right_after_get(False)),
           ("read-write commit issued right after a get", lambda: commit_right_after_get(True)),
           ("@transactional returning tr[key]", transactional_read),
           ("Database.get_and_watch value", get_and_watch),
           ("read-only commit after a future_version read", lambda: failed_read(False)),
           ("read-write commit after a future_version read", lambda: failed_read(True)))


@check()
def check_timeout_from_creation(db):
    # ReadYourWritesTransaction::resetTimeout: timebomb(timeoutInSeconds + creationTime); only
    # reset() moves creationTime (cancellation_timeout_tests cases 6 and 8)
    def set_late():
        tr = db.create_transaction()
        tr[k("tmo")] = b"x"
        time.sleep(0.3)
        tr.options.set_timeout(100)
        expect_error(1031, lambda: tr.commit().wait(), "commit")

    def set_after_on_error():
        tr = db.create_transaction()
        tr[k("tmo")] = b"x"
        time.sleep(0.3)
        tr.on_error(fdb.FDBError(1007)).wait()
        tr[k("tmo")] = b"x"
        tr.options.set_timeout(100)
        expect_error(1031, lambda: tr.commit().wait(), "commit")

    def reset_restarts():
        tr = db.create_transaction()
        time.sleep(0.3)
        tr.reset()
        tr.options.set_timeout(1000)
        tr[k("tmo")] = b"x"
        tr.commit().wait()

    all_of(("100 ms timeout set 300 ms after creation", set_late),
           ("100 ms timeout set after on_error, 300 ms after creation", set_after_on_error),
           ("reset restarts the clock", reset_restarts))


@check()
def check_timeout_fired_is_sticky(db):
    # the timebomb sets resetPromise to transaction_timed_out when it goes off, whether or not
    # an operation is running; onError and commit then fail with it, and unsetting the timeout
    # does not undo it (cancellation_timeout_tests cases 3 and 10)
    def on_error_after():
        tr = db.create_transaction()
        tr.options.set_timeout(100)
        time.sleep(0.3)
        expect_error(1031, lambda: tr.on_error(fdb.FDBError(1007)).wait(), "on_error(1007)")

    def unset_after():
        tr = db.create_transaction()
        tr[k("tmo")] = b"x"
        tr.options.set_timeout(100)
        time.sleep(0.3)
        tr.options.set_timeout(0)
        expect_error(1031, lambda: tr.commit().wait(), "commit")

    all_of(("on_error after the timeout went off (no operation running)", on_error_after),
           ("commit after the timeout went off and was set to 0", unset_after))


def set_tenant_mode(db, mode):
    """Writes \\xff/conf/tenant_mode (as `configure tenant_mode=...' does) and waits until a
    tenant transaction sees the mode (the client learns it from the cluster's ClientDBInfo)."""
    @fdb.transactional
    def write(tr):
        tr.options.set_access_system_keys()
        old = tr[b"\xff/conf/tenant_mode"]
        tr[b"\xff/conf/tenant_mode"] = mode
        return old

    old = write(db)
    return None if old is None or not old.present() else old.value


def with_tenant_mode(fn):
    """Runs fn(db) with tenant mode optional, restoring the mode afterwards."""
    def run(db):
        old = set_tenant_mode(db, b"1")
        try:
            deadline = time.time() + 10
            while True:  # until tenant operations are accepted (2136 while the mode propagates)
                try:
                    fdb.tenant_management.list_tenants(db, b"", b"\xff", 1).to_list()
                    break
                except fdb.FDBError as e:
                    if e.code != 2136 or time.time() > deadline:
                        raise
                    time.sleep(0.05)
            return fn(db)
        finally:
            @fdb.transactional
            def restore(tr):
                tr.options.set_access_system_keys()
                if old is None:
                    del tr[b"\xff/conf/tenant_mode"]
                else:
                    tr[b"\xff/conf/tenant_mode"] = old
            restore(db)
    return run


def retry_2136(fn, seconds=10):
    deadline = time.time() + seconds
    while True:
        try:
            return fn()
        except fdb.FDBError as e:
            if e.code != 2136 or time.time() > deadline:
                raise
            time.sleep(0.05)


@check()
def check_tenant_management(db):
    """fdb.tenant_management (create_tenant, list_tenants, delete_tenant) over the special key
    space, the TenantMapEntry JSON field by field, and a tenant's data under its prefix."""
    tm = fdb.tenant_management

    def body(db):
        names = [b"pysmoke-t1", b"pysmoke-t2"]
        for n in names:
            try:
                tm.delete_tenant(db, n)
            except fdb.FDBError as e:
                if e.code != 2131:
                    raise
        retry_2136(lambda: tm.create_tenant(db, names[0]))
        tm.create_tenant(db, names[1])
        expect_error(2132, lambda: tm.create_tenant(db, names[0]), "create_tenant of an existing tenant")
        listed = tm.list_tenants(db, b"pysmoke-", b"pysmoke.", 10).to_list()
        expect_eq([kv.key for kv in listed], names, "list_tenants names")
        ids = []
        for kv in listed:
            entry = json.loads(kv.value)
            expect_eq(sorted(entry), ["id", "lock_state", "name", "prefix"], "TenantMapEntry JSON members")
            expect(isinstance(entry["id"], int) and entry["id"] > 0, "id %r" % entry["id"])
            expect_eq(base64.b64decode(entry["name"]["base64"]), kv.key, "name.base64")
            expect_eq(entry["name"]["printable"], kv.key.decode(), "name.printable")
            prefix = base64.b64decode(entry["prefix"]["base64"])
            expect_eq(prefix, struct.pack(">q", entry["id"]), "prefix: the id big-endian")
            expect_eq(entry["prefix"]["printable"], "".join("\\x%02x" % b for b in prefix), "prefix.printable")
            expect_eq(entry["lock_state"], "unlocked", "lock_state")
            ids.append(entry["id"])
        expect(ids[1] > ids[0], "ids in creation order: %r" % ids)
        # limit and the single-key read
        expect_eq(len(tm.list_tenants(db, b"pysmoke-", b"pysmoke.", 1).to_list()), 1, "list_tenants limit 1")
        expect_eq(json.loads(db[b"\xff\xff/management/tenant/map/" + names[1]])["id"], ids[1], "map/<name> get")
        # a tenant's data lives under its prefix, and a tenant with data cannot be deleted
        t1 = db.open_tenant(names[0])
        t1[b"k"] = b"v"
        expect_eq(db[struct.pack(">q", ids[0]) + b"k"], b"v", "tenant key under its prefix")
        expect_error(2133, lambda: tm.delete_tenant(db, names[0]), "delete_tenant of a tenant with data")
        del t1[b"k"]
        for n in names:
            tm.delete_tenant(db, n)
        expect_error(2131, lambda: tm.delete_tenant(db, names[0]), "delete_tenant of a deleted tenant")
        expect_eq(tm.list_tenants(db, b"pysmoke-", b"pysmoke.", 10).to_list(), [], "list after deleting")
        return "ids %r" % ids

    return with_tenant_mode(body)(db)


@check()
def check_tenants_disabled(db):
    """With tenant mode disabled, creating a tenant fails with tenants_disabled (2136)."""
    old = set_tenant_mode(db, b"0")
    try:
        expect_error(2136, lambda: fdb.tenant_management.create_tenant(db, b"pysmoke-off"), "create_tenant")
    finally:
        set_tenant_mode(db, old if old is not None else b"0")
    return "2136"


# ---------------------------------------------------------------------------------------------
UPSTREAM = [
    "test_db_options", "test_options", "test_watches", "test_cancellation", "test_retry_limits",
    "test_db_retry_limits", "test_timeouts", "test_db_timeouts", "test_combinations", "test_locality",
    "test_predicates", "test_size_limit_option", "test_get_approximate_size", "test_get_client_status",
]


def add_upstream_checks(directory):
    """FoundationDB's bindings/python/tests/unit_tests.py, each function it runs as one check."""
    sys.path.insert(0, directory)
    import unit_tests  # noqa: E402 (needs fdb.api_version already selected)

    for name in UPSTREAM:
        fn = getattr(unit_tests, name)

        def run(db, fn=fn, name=name):
            return fn() if name == "test_predicates" else fn(db)

        CHECKS.append(("upstream " + name, run, 120))

    # bindings/python/tests/tenant_tests.py (unit_tests.py's test_tenants), with tenant mode on
    import tenant_tests  # noqa: E402
    for name in ["test_tenant_tuple_name", "test_tenant_operations", "test_tenant_operation_retries"]:
        CHECKS.append(("upstream " + name, with_tenant_mode(getattr(tenant_tests, name)), 120))


# ---------------------------------------------------------------------------------------------
# Layers cross-check with cfdb's own tuple/subspace/directory layers (src/layers). The Python
# binding's bytes are recorded in tests/vectors/layers/ (see its README) and compared with the
# recording on every run; with --layers-tool, cfdb's side (tests/layers/layers_xcheck.c) reads
# what Python wrote and writes what Python then reads, on the same cluster.
LAYERS = {"vectors": None, "record": False, "tool": None, "cluster_file": None}


def layers_spec(v):
    """A value as the small text form the C side parses (tests/vectors/layers/README.md)."""
    T = fdb.tuple
    if v is None:
        return "n"
    if isinstance(v, bytes):
        return "b" + v.hex()
    if isinstance(v, str):
        return "s" + v.encode("utf-8").hex()
    if isinstance(v, bool):
        return "T" if v else "F"
    if isinstance(v, int):
        return "i" + ("-" if v < 0 else "") + "%x" % abs(v)
    if isinstance(v, T.SingleFloat):
        return "f" + struct.pack(">f", v.value).hex()
    if isinstance(v, float):
        return "d" + struct.pack(">d", v).hex()
    if isinstance(v, uuid.UUID):
        return "u" + v.bytes.hex()
    if isinstance(v, T.Versionstamp):
        return ("v" + v.to_bytes().hex()) if v.is_complete() else "V%04x" % v.user_version
    if isinstance(v, tuple):
        return "(" + ",".join(layers_spec(x) for x in v) + ")"
    raise ValueError("no spec for %r" % (v,))


def layers_tuple_cases():
    T = fdb.tuple
    SF = T.SingleFloat
    inf, nan = float("inf"), float("nan")
    ints = [0, 1, -1, 2, -2, 255, 256, -255, -256, 65535, 65536, -65535, -65536, 2 ** 24, 2 ** 32 - 1, 2 ** 32,
            -(2 ** 32), 2 ** 40 + 7, 2 ** 56, 2 ** 63 - 1, -(2 ** 63), 2 ** 63, -(2 ** 63) - 1, 2 ** 64 - 2,
            -(2 ** 64) + 2, 2 ** 64 - 1, -(2 ** 64) + 1, 2 ** 64, -(2 ** 64), 2 ** 100, -(2 ** 100), 2 ** 2039,
            -(2 ** 2039), 2 ** 2040 - 1, -(2 ** 2040) + 1, -5551212]
    cases = [(), (None,), (None, None), (b"",), (b"foo\x00bar",), (b"\x00",), (b"\x00\xff",), (b"\xff\xff",),
             (bytes(range(256)),), ("",), ("F\u00d4O\u0000bar",), ("\u4e2d\u6587",), ("\U0001F600",),
             ("nul\x00name",), (True,), (False,), (True, False, None)]
    cases += [(i,) for i in ints]
    cases += [(SF(x),) for x in (0.0, -0.0, 1.25, -42.0, 3.4e38, 1e-45, inf, -inf, nan)]
    cases += [(x,) for x in (0.0, -0.0, 3.5, -3.5, 1e-300, -1e300, 5e-324, inf, -inf, nan, 2.0 ** 53)]
    cases += [(uuid.UUID("12345678-1234-5678-1234-567812345678"),), (uuid.UUID(bytes=b"\x00" * 16),),
              (uuid.UUID(bytes=b"\xff" * 16),)]
    cases += [(T.Versionstamp(b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a", 5),),
              (T.Versionstamp(b"\x00" * 10, 0),), (T.Versionstamp(b"\xfe" * 10, 65535),)]
    cases += [((),), ((None,),), ((b"foo\x00bar", None, ()),), ((1, (2, (3, None))),),
              (("a", 1, None, b"b", (True, 2.5, SF(0.5))),), ((None, None, (None,)),),
              ("pre", (b"\x00\xff", ""), -7, (uuid.UUID(int=1),)), ((T.Versionstamp(b"\x07" * 10, 1),),)]
    vs = [(T.Versionstamp.incomplete(7),), ("k", T.Versionstamp.incomplete(0)),
          ("k", (1, T.Versionstamp.incomplete(0x102)), None)]
    return cases, vs


def layers_tuple_lines():
    """(spec, hex) lines: fdb.tuple.pack of every case; incomplete versionstamps with
    pack_with_versionstamp (their spec starts with '@')."""
    T = fdb.tuple
    cases, vs = layers_tuple_cases()
    lines = []
    for t in cases:
        p = T.pack(t)
        back = T.unpack(p)
        # NaN != NaN: compare through the bytes
        expect_eq(T.pack(back), p, "pack(unpack(pack(%r)))" % (t,))
        lines.append("%s %s" % (layers_spec(t), p.hex()))
    for t in vs:
        lines.append("@%s %s" % (layers_spec(t), T.pack_with_versionstamp(t).hex()))
    return lines


def layers_file(name):
    return os.path.join(LAYERS["vectors"], name)


def layers_compare_or_record(name, lines):
    text = "\n".join(lines) + "\n"
    path = layers_file(name)
    if LAYERS["record"]:
        with open(path, "w") as f:
            f.write(text)
        return "recorded %d lines in %s" % (len(lines), path)
    with open(path) as f:
        recorded = f.read()
    if recorded != text:
        old = recorded.splitlines()
        diff = [(i, a, b) for i, (a, b) in enumerate(zip(old, lines)) if a != b][:3]
        raise AssertionError("%s differs from the binding's bytes (%d vs %d lines; first: %r)"
                             % (path, len(old), len(lines), diff))
    return "%d lines equal to %s" % (len(lines), name)


@check()
def check_layers_tuple_vectors(db):
    if not LAYERS["vectors"]:
        return "SKIP no --layers-vectors"
    return layers_compare_or_record("tuples.txt", layers_tuple_lines())


LAYERS_DIR_PREFIX = b"layers/"


def layers_directory_script(db):
    """The directory operations tests/layers/test_directory.c replays; each its own transaction."""
    S = fdb.Subspace
    L = fdb.DirectoryLayer(node_subspace=S(rawPrefix=LAYERS_DIR_PREFIX + b"\xfe"),
                           content_subspace=S(rawPrefix=LAYERS_DIR_PREFIX))
    M = fdb.DirectoryLayer(node_subspace=S(rawPrefix=LAYERS_DIR_PREFIX + b"manual/\xfe"),
                           content_subspace=S(rawPrefix=LAYERS_DIR_PREFIX + b"manual/"), allow_manual_prefixes=True)
    L.create_or_open(db, ("app",))
    users = L.create_or_open(db, ("app", "users"), layer=b"table")
    L.create(db, ("app", "orders", "2024"))
    L.create_or_open(db, ("part",), layer=b"partition")
    L.create_or_open(db, ("part", "inner", "deep"), layer=b"x")
    L.move(db, ("app", "orders"), ("app", "archive"))
    L.create_or_open(db, ("tmp", "a"))
    L.remove(db, ("tmp",))
    L.create_or_open(db, ("names", "nul\x00name", "\u00fc\u00f1\u00ed\U0001F600"))
    L.move(db, ("part", "inner", "deep"), ("part", "deep2"))
    db[users.pack(("alice", 1))] = fdb.tuple.pack(("x", 2.5))
    M.create(db, ("m1",), prefix=LAYERS_DIR_PREFIX + b"manual/m1/")
    M.create(db, ("m1", "sub"))
    M.create(db, ("m2",), prefix=LAYERS_DIR_PREFIX + b"manual/m2/", layer=b"lay")


@check()
def check_layers_directory_vectors(db):
    if not LAYERS["vectors"]:
        return "SKIP no --layers-vectors"
    import random as _random
    import fdb.directory_impl as _di

    clear_prefix(db, LAYERS_DIR_PREFIX)
    draws = []
    orig = _di.random.randrange
    state = _random.getstate()

    def recording(a, b):
        v = orig(a, b)
        draws.append(v)
        return v

    _random.seed(730)
    _di.random.randrange = recording
    try:
        layers_directory_script(db)
    finally:
        _di.random.randrange = orig
        _random.setstate(state)
    kvs = read_range(db, LAYERS_DIR_PREFIX, LAYERS_DIR_PREFIX[:-1] + b"0")
    a = layers_compare_or_record("directory_draws.txt", ["%d" % d for d in draws])
    b = layers_compare_or_record("directory_tree.kv", ["%s %s" % (k_.hex(), v.hex()) for k_, v in kvs])
    clear_prefix(db, LAYERS_DIR_PREFIX)
    return a + "; " + b


@check()
def check_layers_cross(db):
    """Default directory layer: Python's tree and tuples read by cfdb, cfdb's read by Python."""
    import subprocess

    if not LAYERS["tool"] or not LAYERS["vectors"]:
        return "SKIP no --layers-tool"
    T = fdb.tuple
    D = fdb.directory
    for top in ("layers-py", "layers-c"):
        D.remove_if_exists(db, (top,))
    cases, _ = layers_tuple_cases()
    tdir = D.create_or_open(db, ("layers-py", "tuples"))

    @fdb.transactional
    def store(tr):
        for i, t in enumerate(cases):
            tr[tdir.pack((i,))] = T.pack(t)

    store(db)
    D.create_or_open(db, ("layers-py", "part"), layer=b"partition")
    D.create_or_open(db, ("layers-py", "part", "inner"), layer=b"table")
    D.create_or_open(db, ("layers-py", "gone"))
    D.move(db, ("layers-py", "gone"), ("layers-py", "moved"))
    tool = [LAYERS["tool"], LAYERS["cluster_file"], layers_file("tuples.txt")]
    r = subprocess.run(tool + ["read-python"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError("cfdb read of Python's tree failed: %s%s" % (r.stdout, r.stderr))
    r2 = subprocess.run(tool + ["write-c"], capture_output=True, text=True, timeout=120)
    if r2.returncode != 0:
        raise AssertionError("cfdb write failed: %s%s" % (r2.stdout, r2.stderr))
    # what cfdb wrote, read by Python
    cdir = D.open(db, ("layers-c", "tuples"))
    got = read_range(db, cdir.range().start, cdir.range().stop)
    expect_eq(len(got), len(cases), "tuples cfdb stored")
    for key, value in got:
        i = cdir.unpack(key)[0]
        expect_eq(value, T.pack(cases[i]), "cfdb's bytes for case %d %r" % (i, cases[i]))
    expect_eq(sorted(D.list(db, ("layers-c",))), ["moved", "part", "tuples"], "list of cfdb's tree")
    expect_eq(D.list(db, ("layers-c", "part")), ["inner"], "list inside cfdb's partition")
    inner = D.open(db, ("layers-c", "part", "inner"), layer=b"table")
    expect_eq(inner.get_path(), ("layers-c", "part", "inner"), "path through cfdb's partition")
    part = D.open(db, ("layers-c", "part"))
    expect(inner.key().startswith(part.rawPrefix), "inner prefix inside the partition's prefix")
    expect(not D.exists(db, ("layers-c", "gone")), "cfdb's move removed the old name")
    expect_eq(db[inner.pack(("c-key",))], T.pack(("c-value", 42)), "data cfdb wrote in its directory")
    for top in ("layers-py", "layers-c"):
        D.remove(db, (top,))
    return (r.stdout.strip().splitlines() or [""])[-1] + "; " + (r2.stdout.strip().splitlines() or [""])[-1]



def run_check(name, fn, timeout, db, failures):
    result = {}

    def body():
        try:
            result["detail"] = fn(db)
        except BaseException as e:  # noqa: B902
            result["error"] = e
            result["tb"] = traceback.format_exc()

    t0 = time.time()
    t = threading.Thread(target=body, name=name, daemon=True)
    t.start()
    t.join(timeout)
    took = time.time() - t0
    if t.is_alive():
        failures.append((name, "did not finish within %d s" % timeout))
        print("FAIL %s: did not finish within %d s" % (name, timeout), flush=True)
        return False
    if "error" in result:
        e = result["error"]
        msg = "%s: %s" % (type(e).__name__, e)
        if isinstance(e, fdb.FDBError):
            msg = "FDBError %d (%s)" % (e.code, e.description.decode(errors="replace"))
        tb = result["tb"].strip().splitlines()
        where = next((line.strip() for line in reversed(tb) if "python_smoke.py" in line or "_tests.py" in line), "")
        failures.append((name, msg + (" at " + where if where else "")))
        print("FAIL %s: %s" % (name, msg), flush=True)
        if VERBOSE:
            print(result["tb"], flush=True)
        return True
    detail = result.get("detail")
    if isinstance(detail, str) and detail.startswith("SKIP"):
        print("SKIP %s: %s" % (name, detail[5:]), flush=True)
    else:
        print("PASS %s (%.2fs)%s" % (name, took, ": " + detail if detail else ""), flush=True)
    return True


def main():
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cluster-file", required=True)
    ap.add_argument("--upstream-tests", help="FoundationDB's bindings/python/tests directory")
    ap.add_argument("--only", help="run only checks whose name contains this")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--layers-vectors", help="tests/vectors/layers: compare the binding's tuple and directory "
                    "bytes with the recording there")
    ap.add_argument("--layers-record", action="store_true", help="write those recordings instead of comparing")
    ap.add_argument("--layers-tool", help="cfdb's side of the layers cross-check (build/tests/layers/layers_xcheck)")
    args = ap.parse_args()
    VERBOSE = args.verbose
    LAYERS.update(vectors=args.layers_vectors, record=args.layers_record, tool=args.layers_tool,
                  cluster_file=args.cluster_file)

    failures = []

    # network options, before the network starts (fdb.open starts it)
    trace_dir = tempfile.mkdtemp(prefix="pysmoke-trace-")
    try:
        fdb.options.set_trace_enable(trace_dir)
        fdb.options.set_trace_format("json")
        fdb.options.set_trace_log_group("pysmoke")
        fdb.options.set_knob("min_trace_severity=10")
        print("PASS network_options", flush=True)
    except Exception as e:
        failures.append(("network_options", repr(e)))
        print("FAIL network_options: %r" % e, flush=True)

    db = fdb.open(args.cluster_file)
    # libfdb_c takes these after the network is set up too (knobs are applied, the trace
    # directory is just stored)
    try:
        fdb.options.set_knob("min_trace_severity=10")
        fdb.options.set_trace_enable(trace_dir)
        print("PASS network_options_after_setup", flush=True)
    except Exception as e:
        failures.append(("network_options_after_setup", repr(e)))
        print("FAIL network_options_after_setup: %r" % e, flush=True)

    # start from a clean slate
    clear_prefix(db, PREFIX)
    clear_prefix(db, fdb.tuple.range(("pysmoke",)).start[:-1])
    fdb.directory.remove_if_exists(db, ("pysmoke",))

    if args.upstream_tests:
        add_upstream_checks(args.upstream_tests)
    hung = False
    for name, fn, timeout in CHECKS:
        if args.only and args.only not in name:
            continue
        if not run_check(name, fn, timeout, db, failures):
            hung = True

    total = sum(1 for name, _, _ in CHECKS if not args.only or args.only in name) + 2
    print()
    if failures:
        print("%d of %d checks FAILED:" % (len(failures), total))
        for name, msg in failures:
            print("  %s: %s" % (name, msg))
    else:
        print("all %d checks passed" % total)
    sys.stdout.flush()

    # leaving runs the binding's atexit hook (fdb_stop_network, join of the network thread)
    if hung:
        os._exit(1)

    def watchdog():
        time.sleep(30)
        print("FAIL exit: fdb_stop_network/network thread join did not finish in 30 s", flush=True)
        os._exit(3)

    threading.Thread(target=watchdog, daemon=True).start()
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
