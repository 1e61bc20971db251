#!/usr/bin/env bash
# The real-Spark suite (make test-spark): PySpark 4.2.0 in a virtualenv under .cache/sparkenv
# (made on first use; Spark's Kafka connector comes from Maven Central through Ivy into
# .cache/spark/ivy once, ~63 MB), Java 17+, and the broker of `make kafka-up`. It runs
# cli's TestRealSpark: a Structured Streaming query while a producer writes, kbatch spark live
# beside it, watch --from-spark, offsets show --format spark and the TUI's e export in Spark
# batch queries, and the job of replay --emit spark. The checkpoint stays in .cache/spark/work
# and is then copied into three object stores (scripts/objstore-test.sh, make test-objstore).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYSPARK_VERSION=${PYSPARK_VERSION:-4.2.0}
cache=$root/.cache/spark
venv=$root/.cache/sparkenv
boot=$(cat "$root/.cache/kafka/bootstrap" 2>/dev/null) || { echo "test-spark: no broker; run 'make kafka-up' first" >&2; exit 1; }
command -v java >/dev/null || { echo "test-spark: no java on PATH (Spark needs Java 17 or later)" >&2; exit 1; }
# A virtualenv writes its own path into its scripts: one moved with .cache (a CI cache
# restored elsewhere) fails to start, so the marker names the path it was made at.
if [ "$(cat "$venv/.complete-$PYSPARK_VERSION" 2>/dev/null)" != "$venv" ]; then
  echo "test-spark: installing pyspark $PYSPARK_VERSION into ${venv#"$root"/}" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "pyspark==$PYSPARK_VERSION" >&2
  echo "$venv" >"$venv/.complete-$PYSPARK_VERSION"
fi
mkdir -p "$cache"
t0=$SECONDS
cd "$root"
# SPARK_LOCAL_IP: the driver binds to loopback instead of looking for an interface.
export SPARK_LOCAL_IP=127.0.0.1 KBATCH_TEST_BROKERS=$boot KBATCH_TEST_SPARK_PYTHON=$venv/bin/python \
  KBATCH_TEST_SPARK_CACHE=$cache
if [ "${1:-}" = fixtures ]; then
  # make spark-fixtures: rewrite the real-Spark fixtures of testdata/spark-real that
  # TestRealSparkFixtures makes (see testdata/spark-real/SOURCES.md).
  KBATCH_TEST_SPARK_FIXTURES=$root/testdata/spark-real \
    go test -count=1 -timeout 40m -run '^TestRealSparkFixtures$' -v ./cli/ 2>&1 | tee "$cache/fixtures.log" |
    grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|spark_fixtures_real_test.go' || true
  grep -q '^--- PASS: TestRealSparkFixtures ' "$cache/fixtures.log" ||
    { echo "spark-fixtures: TestRealSparkFixtures did not run and pass (log: .cache/spark/fixtures.log)" >&2; exit 1; }
  echo "spark-fixtures: written in $((SECONDS - t0)) s" >&2
  exit 0
fi
KBATCH_TEST_SPARK_WORK=$cache/work \
  go test -count=1 -timeout 40m -run '^TestRealSpark$' -v ./cli/ 2>&1 | tee "$cache/test.log" |
  grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|spark_real_test.go' || true
grep -q '^--- PASS: TestRealSpark ' "$cache/test.log" || { echo "test-spark: TestRealSpark did not run and pass (log: .cache/spark/test.log)" >&2; exit 1; }
echo "test-spark: TestRealSpark passed in $((SECONDS - t0)) s" >&2
# The checkpoint the query wrote, copied into S3 (moto), GCS (fake-gcs-server) and Azure Blob
# (Azurite); SPARK_TEST_OBJSTORE=0 leaves this out.
if [ "${SPARK_TEST_OBJSTORE:-1}" != 0 ]; then
  KBATCH_TEST_SPARK_CKPT=$cache/work/checkpoint ./scripts/objstore-test.sh
fi
echo "test-spark: passed in $((SECONDS - t0)) s" >&2
