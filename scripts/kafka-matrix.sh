#!/usr/bin/env bash
# The real-broker suite on several Kafka releases in turn, each on a fresh single-node broker
# of kafka-up.sh (stopped afterwards), then the codec cross-check (kafka-codecs.sh) on the
# same broker. Keeps going when a version fails; prints a table of start-up, suite and codec
# times and the result per version (also into .cache/kafka/matrix-MODE.txt) and exits 1 if
# any version failed. Needs bin/kbatch for the codec check (make build).
# Usage: scripts/kafka-matrix.sh full|smoke VERSION...
#   full   make test-kafka        (every test of every package)
#   smoke  make test-kafka-smoke  (stream, replay with transactions, data loss, kill tests)
# MATRIX_CODECS=0 leaves the codec check out.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
mode=${1:-}
case $mode in full) target=test-kafka ;; smoke) target=test-kafka-smoke ;;
*) echo "usage: kafka-matrix.sh full|smoke VERSION..." >&2; exit 2 ;; esac
shift
[ $# -gt 0 ] || { echo "kafka-matrix.sh: no versions given" >&2; exit 2; }
mkdir -p .cache/kafka
summary=.cache/kafka/matrix-$mode.txt
rows=()
failed=0
for v in "$@"; do
  echo "== Kafka $v: $target" >&2
  make -s kafka-down >/dev/null 2>&1
  t0=$SECONDS
  if ! KAFKA_VERSION=$v make -s kafka-up >/dev/null; then
    rows+=("$(printf '%-8s %7s %8s %8s  %s' "$v" - - - "FAIL (kafka-up)")")
    failed=1
    continue
  fi
  up=$((SECONDS - t0))
  t1=$SECONDS
  log=.cache/kafka/matrix-$mode-$v.log
  res=pass
  if ! make -s "$target" 2>&1 | tee "$log" >&2; then
    res="FAIL (suite, see $log)"
    failed=1
  fi
  suite=$((SECONDS - t1))
  codecs=-
  if [ "${MATRIX_CODECS:-1}" != 0 ]; then
    t2=$SECONDS
    if ! scripts/kafka-codecs.sh 2>&1 | tee "$log.codecs" >&2; then
      [ "$res" = pass ] && res="FAIL (codecs, see $log.codecs)" || res="$res; FAIL (codecs)"
      failed=1
    fi
    codecs=$((SECONDS - t2))s
  fi
  rows+=("$(printf '%-8s %6ss %7ss %8s  %s' "$v" "$up" "$suite" "$codecs" "$res")")
  make -s kafka-down >/dev/null 2>&1
done
{
  echo "kafka-matrix $mode ($(date -u +%FT%TZ), $(git rev-parse --short HEAD 2>/dev/null))"
  printf '%-8s %7s %8s %8s  %s\n' version startup suite codecs result
  printf '%s\n' "${rows[@]}"
} | tee "$summary" >&2
exit "$failed"
