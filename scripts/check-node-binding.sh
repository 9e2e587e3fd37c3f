#!/usr/bin/env bash
# Runs an existing FoundationDB binding, unmodified, on cfdb: the Node.js package
# "foundationdb" (a native addon compiled against fdb_c.h and linked with -lfdb_c) is built
# against cfdb's headers and libfdb_c.so, then used against a cfdb-server.
# Needs the npm registry and Node.js headers (/usr/include/node). Not part of CI.
#   scripts/check-node-binding.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=$(realpath "${1:-build}")
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > /dev/null
cd "$work"
npm init -y > /dev/null
npm install --ignore-scripts foundationdb@2.0.1 > /dev/null
# compile the addon against our headers and library (node-gyp from the npm registry)
(cd node_modules/foundationdb &&
    CPATH="$work/prefix/include" LIBRARY_PATH="$work/prefix/lib" npx -y node-gyp@10 rebuild --nodedir=/usr > gyp.log 2>&1)

"$build/src/server/cfdb-server" --listen 127.0.0.1:0 --cluster-file "$work/fdb.cluster" --quiet &
server=$!
for _ in $(seq 100); do [[ -s $work/fdb.cluster ]] && break; sleep 0.05; done

cat > t.js <<'JS'
const fdb = require('foundationdb');
fdb.setAPIVersion(720); // the newest this binding release knows; libfdb_c 7.3 serves it too
const db = fdb.open(process.argv[2]);
(async () => {
  await db.set('node/hello', 'world');
  console.log('get:', (await db.get('node/hello')).toString());
  await db.doTransaction(async tn => { for (let i = 0; i < 10; i++) tn.set('node/k' + i, 'v' + i); });
  console.log('range rows:', (await db.getRangeAll('node/k', 'node/l')).length);
  await db.doTransaction(async tn => { tn.add('node/counter', Buffer.from([5, 0, 0, 0, 0, 0, 0, 0])); });
  console.log('counter:', (await db.get('node/counter')).readBigInt64LE());
  const vs = await db.doTransaction(async tn => {
    tn.setVersionstampPrefixedValue('node/vs', Buffer.from('x'));
    return tn.getVersionstamp();
  });
  console.log('versionstamp bytes:', (await vs.promise).length);
  const w = await db.doTransaction(async tn => tn.watch('node/bell'));
  setTimeout(() => db.set('node/bell', 'ding'), 50);
  console.log('watch fired:', await w.promise);
  db.close();
  fdb.stopNetworkSync();
})().catch(e => { console.error('ERROR', e); process.exit(1); });
JS
LD_LIBRARY_PATH="$work/prefix/lib" node t.js "$work/fdb.cluster"
echo "node-foundationdb ran on cfdb"
