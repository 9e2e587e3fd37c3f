#!/usr/bin/env bash
# Runs FoundationDB's own Python binding (pure Python over ctypes), unmodified, on cfdb: the
# binding is taken from a FoundationDB source tree at run time (nothing of it lives in this
# repository), its two build-time files fdb/fdboptions.py (what vexillographer's python writer
# makes from fdbclient/vexillographer/fdb.options) and fdb/apiversion.py (apiversion.py.cmake)
# are generated into a temp dir, and tests/bindings/python_smoke.py runs against a cfdb-server
# with build/src/api (cfdb's libfdb_c.so) on LD_LIBRARY_PATH. Needs python3 and a FoundationDB
# git repository; not part of CI.
#   scripts/check-python-binding.sh [BUILD_DIR [FDB_GIT_DIR [FDB_TAG]]]
#   defaults: build, /work/.mirror/apple+foundationdb/repo, 7.3.77
#   FDB_GIT_DIR may also be a checked-out FoundationDB source tree (then FDB_TAG is ignored).
#   Extra arguments for the smoke test go in SMOKE_ARGS (e.g. SMOKE_ARGS=--verbose).
# Layers: the binding's tuple encodings and a directory tree's raw key/values are compared with
# tests/vectors/layers/ (LAYERS_RECORD=1 rewrites them from the binding instead), and when
# BUILD_DIR/tests/layers/layers_xcheck exists cfdb's tuple/directory layers read the tree and
# tuples Python wrote, then write their own for Python to read (check_layers_cross).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=$(realpath "${1:-build}")
fdb_src=${2:-/work/.mirror/apple+foundationdb/repo}
fdb_tag=${3:-7.3.77}
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; wait "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

# 1. the binding's sources, the options file and the API version definitions
paths=(bindings/python fdbclient/vexillographer/fdb.options flow/ApiVersions.cmake)
mkdir -p "$work/src"
if [[ -f $fdb_src/bindings/python/fdb/impl.py ]]; then
    (cd "$fdb_src" && tar -cf - "${paths[@]}") | tar -xf - -C "$work/src"
else
    git --git-dir="$fdb_src" archive "$fdb_tag" "${paths[@]}" | tar -xf - -C "$work/src"
fi
mkdir -p "$work/py"
cp -r "$work/src/bindings/python/fdb" "$work/py/fdb"
rm -f "$work/py/fdb/apiversion.py.cmake"

# 2. fdb/fdboptions.py and fdb/apiversion.py, as FoundationDB's build writes them
python3 - "$work/src" "$work/py/fdb" <<'PY'
import re, sys, xml.etree.ElementTree as ET
src, out = sys.argv[1], sys.argv[2]
# fdbclient/vexillographer/python.cs + vexillographer.cs: every scope in enum order, options in
# file order, hidden ones and ones with disableOn listing "python" left out
scopes = ["NetworkOption", "DatabaseOption", "TransactionOption", "StreamingMode",
          "MutationType", "ConflictRangeType", "ErrorPredicate"]
types = {None: "type(None)", "Int": "type(0)", "String": "type('')", "Bytes": "type(b'')"}
root = ET.parse(src + "/fdbclient/vexillographer/fdb.options").getroot()
header = '''# FoundationDB Python API
# Copyright (c) 2013-2017 Apple Inc.

# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to deal
# in the Software without restriction, including without limitation the rights
# to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
# copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:

# The above copyright notice and this permission notice shall be included in
# all copies or substantial portions of the Software.

# THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
# IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
# FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
# AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
# LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
# OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
# THE SOFTWARE.

import types
'''
lines = [header]
for scope in scopes:
    options = []
    for s in root.findall("Scope"):
        if s.get("name") != scope:
            continue
        for o in s.findall("Option"):
            if o.get("hidden") == "true" or "python" in (o.get("disableOn") or "").split(","):
                continue
            desc = o.get("paramDescription")
            options.append('    "%s" : (%d, "%s", %s, %s),' % (
                o.get("name"), int(o.get("code")), o.get("description") or "",
                types[o.get("paramType")], "None" if desc is None else '"%s"' % desc))
    lines.append("%s = {\n%s\n}\n\n" % (scope, "\n".join(options)))
with open(out + "/fdboptions.py", "w") as f:
    f.write("\n".join(lines[:1]) + "\n" + "".join(lines[1:]))
compile(open(out + "/fdboptions.py").read(), "fdboptions.py", "exec")

m = re.search(r'set\(FDB_AV_LATEST_BINDINGS_VERSION\s+"(\d+)"\)', open(src + "/flow/ApiVersions.cmake").read())
template = open(src + "/bindings/python/fdb/apiversion.py.cmake").read()
with open(out + "/apiversion.py", "w") as f:
    f.write(template.replace("@FDB_AV_LATEST_BINDINGS_VERSION@", m.group(1)))
PY

# 3. a dev server on a free port, then the smoke test on cfdb's libfdb_c.so
"$build/src/server/cfdb-server" --listen 127.0.0.1:0 --cluster-file "$work/fdb.cluster" --quiet &
server=$!
for _ in $(seq 100); do [[ -s $work/fdb.cluster ]] && break; sleep 0.05; done
[[ -s $work/fdb.cluster ]] || { echo "cfdb-server did not start" >&2; exit 1; }

status=0
layers_tool=""
[[ -x $build/tests/layers/layers_xcheck ]] && layers_tool=$build/tests/layers/layers_xcheck
# shellcheck disable=SC2086 # SMOKE_ARGS is a list of arguments
TMPDIR="$work" PYTHONPATH="$work/py" LD_LIBRARY_PATH="$build/src/api${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    python3 tests/bindings/python_smoke.py --cluster-file "$work/fdb.cluster" \
    --upstream-tests "$work/src/bindings/python/tests" --layers-vectors "$PWD/tests/vectors/layers" \
    ${LAYERS_RECORD:+--layers-record} \
    ${layers_tool:+--layers-tool "$layers_tool"} ${SMOKE_ARGS:-} || status=$?
if ((status == 0)); then
    echo "FoundationDB $fdb_tag Python binding ran on cfdb"
else
    echo "FoundationDB $fdb_tag Python binding: failures on cfdb (exit $status)" >&2
fi
exit "$status"
