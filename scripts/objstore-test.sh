#!/usr/bin/env bash
# The object-store suite (make test-objstore; also the end of make test-spark): starts moto,
# fake-gcs-server and Azurite (scripts/objstore-up.sh), runs cli's TestRealObjstore with the
# environment of .cache/objstore/env, and stops them again, pass or fail. The checkpoint copied
# into each store is $KBATCH_TEST_SPARK_CKPT when set (make test-spark passes the one its query
# wrote), else the real-Spark fixture testdata/spark-real/spark-4.2.0-3-partitions.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
t0=$SECONDS
trap './scripts/objstore-down.sh' EXIT
./scripts/objstore-up.sh >/dev/null
log=.cache/objstore/test.log
set -a
# shellcheck source=/dev/null
. .cache/objstore/env
set +a
KBATCH_TEST_OBJSTORE=1 go test -count=1 -timeout 15m -run '^TestRealObjstore$' -v ./cli/ 2>&1 | tee "$log" |
  grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|objstore_real_test.go' || true
grep -q '^--- PASS: TestRealObjstore ' "$log" || { echo "test-objstore: TestRealObjstore did not run and pass (log: $log)" >&2; exit 1; }
echo "test-objstore: passed in $((SECONDS - t0)) s" >&2
