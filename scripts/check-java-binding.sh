#!/usr/bin/env bash
# Runs FoundationDB's own Java binding (Java classes over the JNI library libfdb_java.so),
# unmodified, on cfdb: the binding is taken from a FoundationDB source tree at run time (nothing
# of it lives in this repository), its build-time Java files (what vexillographer's java writer
# makes from fdbclient/vexillographer/fdb.options: NetworkOptions, DatabaseOptions,
# TransactionOptions, StreamingMode, MutationType, ConflictRangeType, FDBException; and
# ApiVersion.java from ApiVersion.java.cmake) are generated into a temp dir, the sources are
# compiled with javac (the JNI headers with javac -h), bindings/java/fdbJNI.cpp is compiled
# against cfdb's include/foundationdb and linked with -lfdb_c from BUILD_DIR/src/api, both are
# packed into a jar laid out like FoundationDB's fat jar (lib/linux/<arch>/libfdb_java.so, where
# the binding's JNIUtil looks for it), and tests/bindings/JavaSmoke.java runs against a
# cfdb-server with build/src/api (cfdb's libfdb_c.so) on LD_LIBRARY_PATH and java.library.path.
# Needs python3, a JDK (javac, java, jar; tried with 17), a C++ compiler and a FoundationDB git
# repository; not part of CI. Only the binding's main sources are built: its src/junit and
# src/integration tests need JUnit 5 jars, and src/test is its own stack tester.
#   scripts/check-java-binding.sh [BUILD_DIR [FDB_GIT_DIR [FDB_TAG]]]
#   defaults: build, /work/.mirror/apple+foundationdb/repo, 7.3.77
#   FDB_GIT_DIR may also be a checked-out FoundationDB source tree (then FDB_TAG is ignored).
#   Extra arguments for the smoke test go in SMOKE_ARGS (e.g. SMOKE_ARGS=--verbose,
#   SMOKE_ARGS="--only watch"); CXX picks the C++ compiler (default g++).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=$(realpath "${1:-build}")
fdb_src=${2:-/work/.mirror/apple+foundationdb/repo}
fdb_tag=${3:-7.3.77}
cxx=${CXX:-g++}
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; wait "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

java_home=$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")
[[ -f $java_home/include/jni.h ]] || { echo "no jni.h under $java_home/include" >&2; exit 1; }

# 1. the binding's sources, the options file and the API version definitions
paths=(bindings/java fdbclient/vexillographer/fdb.options flow/ApiVersions.cmake)
mkdir -p "$work/src"
if [[ -f $fdb_src/bindings/java/fdbJNI.cpp ]]; then
    (cd "$fdb_src" && tar -cf - "${paths[@]}") | tar -xf - -C "$work/src"
else
    git --git-dir="$fdb_src" archive "$fdb_tag" "${paths[@]}" | tar -xf - -C "$work/src"
fi
java_src=$work/src/bindings/java
gen=$work/generated/com/apple/foundationdb
mkdir -p "$gen"

# 2. the generated Java files, as FoundationDB's build writes them
python3 - "$work/src" "$gen" <<'PY'
import re, sys, xml.etree.ElementTree as ET
src, out = sys.argv[1], sys.argv[2]
# fdbclient/vexillographer/java.cs + vexillographer.cs: one file per scope, in enum order;
# options with disableOn listing "java" left out; hidden ones left out of the output (but counted
# for "no options available"); option classes list documented options first (a stable sort on
# comment == ""), enums keep file order; lines end in "\r" (java.cs sets NewLine = "\r", the
# verbatim blocks keep their "\n")
scopes = ["NetworkOption", "DatabaseOption", "TransactionOption", "StreamingMode",
          "MutationType", "ConflictRangeType", "ErrorPredicate"]
docs = {
    "NetworkOption": (True, "A set of options that can be set globally for the {@link FDB FoundationDB API}.", True),
    "DatabaseOption": (True, "A set of options that can be set on a {@link Database}.", True),
    "TransactionOption": (True, "A set of options that can be set on a {@link Transaction}.", True),
    "StreamingMode": (False, "Options that control the way the Java binding performs range reads. These options can be passed to {@link Transaction#getRange(byte[], byte[], int, boolean, StreamingMode) Transaction.getRange(...)}.", True),
    "MutationType": (False, "A set of operations that can be performed atomically on a database. These are used as parameters to {@link Transaction#mutate(MutationType, byte[], byte[])}.", True),
    "ConflictRangeType": (False, "Conflict range types used internally by the C API.", False),
    "ErrorPredicate": (True, "Error code predicates for binding writers and non-standard layer implementers.", True),
}
java_types = {"Int": "long", "Bytes": "byte[]", "String": "String"}
NL = "\r"

root = ET.parse(src + "/fdbclient/vexillographer/fdb.options").getroot()
options = []
for s in root.findall("Scope"):
    for o in s.findall("Option"):
        if "java" in (o.get("disableOn") or "").split(","):
            continue
        options.append({"scope": s.get("name"), "name": o.get("name"), "code": int(o.get("code")),
                        "type": o.get("paramType"), "paramDesc": o.get("paramDescription"),
                        "comment": o.get("description") or "", "hidden": o.get("hidden") == "true"})

def format_comment(tabs, text):
    t = "\t" * tabs
    return t + "/**" + "".join("\n" + t + " * " + line.strip() for line in text.split("\n")) + "\n" + t + " *" + "/"

def replace_ticks(s):
    out, last = "", 0
    start = s.find("``")
    while start >= 0:
        out += s[last:start]
        close = s.find("``", start + 2)
        if close < 0:
            raise ValueError("No closing double tick")
        out += "{@code " + s[start + 2:close] + "}"
        last = close + 2
        start = s.find("``", last)
    return out + s[last:]

def camel(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))

def deprecated(o):
    return o["comment"].startswith("Deprecated")

def member_comment(o, extra=""):
    c = o["comment"]
    if not c.endswith("."):
        c += "."
    if o["paramDesc"] is not None:
        c += "\n\n@param value " + o["paramDesc"]
    return format_comment(1, replace_ticks(c + extra))

def options_class(scope, opts):
    name = scope + "s"
    w = ["package com.apple.foundationdb;", "",
         format_comment(0, docs[scope][1] + ("\n\nThere are currently no options available." if not opts else "")),
         "public class %s extends OptionsSet {" % name,
         "\tpublic %s( OptionConsumer consumer ) { super(consumer); }" % name]
    for o in opts:
        if o["hidden"]:
            continue
        w.append("")
        if o["comment"]:
            w.append(member_comment(o))
        if deprecated(o):
            w.append("\t@Deprecated")
        if o["type"] is None:
            w.append("\tpublic void set%s() { setOption(%d); }" % (camel(o["name"]), o["code"]))
        else:
            w.append("\tpublic void set%s(%s value) { setOption(%d, value); }" % (camel(o["name"]), java_types[o["type"]], o["code"]))
    w.append("}")
    return w

def predicate_class(scope, opts):
    w = [PREDICATE_CLASS_HEAD]
    for o in opts:
        if o["hidden"]:
            continue
        w.append("")
        if o["comment"]:
            w.append(member_comment(o, "\n\n@return {@code true} if this {@code FDBException} is {@code " + o["name"] + "}"))
        if deprecated(o):
            w.append("\t@Deprecated")
        w.append("\tpublic boolean is%s() { return FDB.evalErrorPredicate(%d, this.code); }" % (camel(o["name"]), o["code"]))
    w.append("}")
    return w

def enum_member(o):
    c = o["comment"] or "Currently undocumented."
    if not c.endswith("."):
        c += "."
    return format_comment(1, replace_ticks(c)) + "\n%s\t%s(%d)" % ("\t@Deprecated\n" if deprecated(o) else "", o["name"].upper(), o["code"])

def enum_class(scope, opts):
    return ["package com.apple.foundationdb;", "",
            format_comment(0, docs[scope][1] + ("\n\nThere are currently no options available." if not opts else "")),
            "%senum %s {" % ("public " if docs[scope][2] else "", scope),
            ",\n\n".join(enum_member(o) for o in opts if not o["hidden"]) + ";",
            ENUM_TAIL.replace("{0}", scope)]

PREDICATE_CLASS_HEAD = '''package com.apple.foundationdb;

import com.apple.foundationdb.async.CloneableException;

/**
 * An Error from the native layers of FoundationDB.  Each {@code FDBException} sets
 *  the {@code message} of the underlying Java {@link Exception}. FDB exceptions expose
 *  a number of functions including, for example, {@link #isRetryable()} that
 *  evaluate predicates on the internal FDB error. Most clients should use those methods
 *  in order to implement special handling for certain errors if their application
 *  requires it.
 *
 * <p>
 * Errors in FDB should generally be retried if they match the {@link #isRetryable()}
 *  predicate. In addition, as with any distributed system, certain classes of errors
 *  may fail in such a way that it is unclear whether the transaction succeeded (they
 *  {@link #isMaybeCommitted() may be committed} or not). To handle these cases, clients
 *  are generally advised to make their database operations idempotent and to place
 *  their operations within retry loops. The FDB Java API provides some default retry loops
 *  within the {@link Database} interface. See the discussion within the documentation of
 *  {@link Database#runAsync(Function) Database.runAsync()} for more details.
 *
 * @see com.apple.foundationdb.Transaction#onError(Throwable) Transaction.onError()
 * @see com.apple.foundationdb.Database#runAsync(Function) Database.runAsync()
 */
public class FDBException extends RuntimeException implements CloneableException {
    private static final long serialVersionUID = 1L;
    private final int code;

    /**
     * A general constructor.  Not for use by client code.
     *
     * @param message error message of this exception
     * @param code internal FDB error code of this exception
     */
    public FDBException(String message, int code) {
        super(message);
        this.code = code;
    }

    /**
     * Gets the code for this error. A list of common errors codes
     *  are published <a href="/foundationdb/api-error-codes.html">elsewhere within
     *  our documentation</a>.
     *
     * @return the internal FDB error code
     */
    public int getCode() {
        return code;
    }

    /**
     * Determine if this {@code FDBException} represents a success code from the native layer.
     *
     * @return {@code true} if this error represents success, {@code false} otherwise
     */
    public boolean isSuccess() {
        return getCode() == 0;
    }

    @Override
    public Exception retargetClone() {
        FDBException exception = new FDBException(getMessage(), code);
        exception.initCause(this);
        return exception;
    }
'''

ENUM_TAIL = '''
    private final int code;

    {0}(int code) {
        this.code = code;
    }

    /**
     * Gets the FoundationDB native-level constant code for a {@code {0}}.
     *
     * @return the native code for a FoundationDB {@code {0}} constant.
     */
    public int code() {
        return this.code;
    }
}'''

for scope in scopes:
    opts = [o for o in options if o["scope"] == scope]
    settable = docs[scope][0]
    if settable:
        opts = sorted(opts, key=lambda o: o["comment"] == "")  # stable, like LINQ OrderBy
        lines = (predicate_class if scope == "ErrorPredicate" else options_class)(scope, opts)
    else:
        lines = enum_class(scope, opts)
    name = "FDBException" if scope == "ErrorPredicate" else scope + ("s" if settable else "")
    with open("%s/%s.java" % (out, name), "w", newline="") as f:
        f.write("".join(line + NL for line in lines))

m = re.search(r'set\(FDB_AV_LATEST_BINDINGS_VERSION\s+"(\d+)"\)', open(src + "/flow/ApiVersions.cmake").read())
template = open(src + "/bindings/java/src/main/com/apple/foundationdb/ApiVersion.java.cmake").read()
with open(out + "/ApiVersion.java", "w") as f:
    f.write(template.replace("@FDB_AV_LATEST_BINDINGS_VERSION@", m.group(1)))
PY

# 3. the Java classes (and, with javac -h, the JNI headers fdbJNI.cpp includes); only the main
# sources, which need nothing but the JDK (the junit/integration tests need JUnit 5 jars)
mkdir -p "$work/classes" "$work/jni"
find "$java_src/src/main" "$work/generated" -name '*.java' > "$work/sources.txt"
javac -nowarn -Xlint:none -XDignore.symbol.file -encoding UTF-8 -d "$work/classes" -h "$work/jni" \
    @"$work/sources.txt" 2> "$work/javac.log" || { cat "$work/javac.log" >&2; exit 1; }

# 4. libfdb_java.so: fdbJNI.cpp against cfdb's fdb_c.h, linked with cfdb's libfdb_c.so; with
# --no-undefined every fdb_* function the JNI layer calls must be exported by cfdb
"$cxx" -std=c++17 -O2 -fPIC -shared -fvisibility=hidden -w \
    -I"$java_home/include" -I"$java_home/include/linux" -I"$work/jni" -I"$PWD/include" \
    "$java_src/fdbJNI.cpp" -o "$work/libfdb_java.so" \
    -L"$build/src/api" -lfdb_c -Wl,--no-undefined

# 5. a jar laid out like FoundationDB's fat jar: JNIUtil.loadLibrary("fdb_java") loads
# lib/<os>/<arch>/libfdb_java.so from the class path (FDB_LIBRARY_PATH_FDB_JAVA would also do)
case $(uname -m) in x86_64) arch=amd64 ;; *) arch=$(uname -m) ;; esac
mkdir -p "$work/classes/lib/linux/$arch"
cp "$work/libfdb_java.so" "$work/classes/lib/linux/$arch/"
jar cf "$work/fdb-java.jar" -C "$work/classes" .
mkdir -p "$work/smoke"
javac -encoding UTF-8 -cp "$work/fdb-java.jar" -d "$work/smoke" tests/bindings/JavaSmoke.java

# 6. a dev server on a free port, then the smoke test on cfdb's libfdb_c.so
"$build/src/server/cfdb-server" --listen 127.0.0.1:0 --cluster-file "$work/fdb.cluster" --quiet &
server=$!
for _ in $(seq 100); do [[ -s $work/fdb.cluster ]] && break; sleep 0.05; done
[[ -s $work/fdb.cluster ]] || { echo "cfdb-server did not start" >&2; exit 1; }

status=0
# shellcheck disable=SC2086 # SMOKE_ARGS is a list of arguments
LD_LIBRARY_PATH="$build/src/api${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    java -Djava.library.path="$build/src/api" -Djava.io.tmpdir="$work" \
    -cp "$work/fdb-java.jar:$work/smoke" JavaSmoke --cluster-file "$work/fdb.cluster" \
    ${SMOKE_ARGS:-} || status=$?
if ((status == 0)); then
    echo "FoundationDB $fdb_tag Java binding ran on cfdb"
else
    echo "FoundationDB $fdb_tag Java binding: failures on cfdb (exit $status)" >&2
fi
exit "$status"
