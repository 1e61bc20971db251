#!/usr/bin/env bash
# Every codec, every producer: records written by the Java producer (console producer with
# idempotence; producer-perf-test inside transactions) and by librdkafka (kcat -P -z) with
# none, gzip, snappy, lz4 and zstd must read exactly the same -- partition, offset, key, value,
# timestamp -- by kbatch replay, by kbatch watch --no-tui --sink, by kcat -C -J and by the Java
# console consumer. On a Kafka 2.x broker the same runs again into topics kept in the old
# message formats (message.format.version 0.10.2 = magic 1, 0.9.0 = magic 0, no zstd there),
# which kbatch decodes on its legacy MessageSet path. Every topic's log segments are dumped
# (DumpLogSegments) to prove the codec and format on disk are the ones the case claims.
#
# Runs against the broker of kafka-up.sh (.cache/kafka/bootstrap, log dir .cache/kafka/data),
# with the Java tools of the broker's own release. Needs bin/kbatch (make build), java, kcat, jq.
# Usage: scripts/kafka-codecs.sh        (make test-codecs)
# Env: CODEC_RECORDS records per case (default 3000); CODEC_CASES an extended regex on
# "producer:codec:magic" (e.g. 'lz4:0$') to run only some cases; CODEC_KEEP=1 keeps the files.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka-lib.sh"
cd "$KBATCH_ROOT"

n=${CODEC_RECORDS:-3000}
fail() { echo "kafka-codecs: $*" >&2; exit 1; }
for tool in kcat jq "$JAVA"; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (.ci/run installs kcat and jq with apt-get)"
done
[ -x bin/kbatch ] || fail "no bin/kbatch; run make build"
[ -s "$K_BOOTFILE" ] && k_alive || fail "no broker; run make kafka-up"
boot=$(cat "$K_BOOTFILE")
version=$(cat "$K_VERFILE")
libs=$KAFKA_CACHE_DIR/$version/libs
[ -s "$K_LOG4J_TOOLS" ] || k_write_log4j
topiccmd=$(k_topic_class "$libs")
producer=$(k_class "$libs" org.apache.kafka.tools.ConsoleProducer kafka.tools.ConsoleProducer)
consumer=$(k_class "$libs" org.apache.kafka.tools.consumer.ConsoleConsumer kafka.tools.ConsoleConsumer)
perf=$(k_class "$libs" org.apache.kafka.tools.ProducerPerformance)
dump=$(k_class "$libs" org.apache.kafka.tools.DumpLogSegments kafka.tools.DumpLogSegments)
jtool() { k_tool "$libs" "$@"; }

work=$(mktemp -d)
# CODEC_KEEP=1 keeps every reader's normalised output (in a dir named on stderr).
if [ -n "${CODEC_KEEP:-}" ]; then echo "kafka-codecs: keeping $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
run=$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')

# Input lines "key<TAB>value": values long and repetitive enough that every codec shrinks
# them (librdkafka sends a batch uncompressed when compression does not pay).
for i in $(seq 1 "$n"); do
  printf 'key-%d\t{"seq":%d,"text":"%s","pad":"%s"}\n' "$i" "$i" "the quick brown fox $((i % 17)) jumps" \
    "$(printf 'abcdefgh%.0s' $(seq 1 $((i % 7 + 3))))"
done >"$work/input.tsv"
cut -f2 "$work/input.tsv" >"$work/payloads.txt"

# norm: JSON lines of one reader -> sorted "partition offset ts key value" (TSV; null = <null>).
norm_kbatch() {
  jq -r 'select(.offset != null) | [.partition, .offset,
      (if .timestamp == null then -1 else ((.timestamp | sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1000
        + ((.timestamp | capture("\\.(?<ms>[0-9]{3})").ms // "0") | tonumber)) end),
      (.key // .key_b64 // "<null>"), (.value // .value_b64 // "<null>")] | @tsv' | sort -n -k1,1 -k2,2
}
norm_kcat() { jq -r '[.partition, .offset, (.ts // -1), (.key // "<null>"), (.payload // "<null>")] | @tsv' | sort -n -k1,1 -k2,2; }
# The Java console consumer: CreateTime:TS<TAB>Partition:P<TAB>Offset:O<TAB>KEY<TAB>VALUE
# (NO_TIMESTAMP for magic 0; "null" for a missing key).
norm_java() {
  awk -F'\t' 'BEGIN{OFS="\t"} /^(CreateTime|LogAppendTime|NO_TIMESTAMP|NoTimestampType)/ {
      ts = -1; if (split($1, t, ":") == 2) ts = t[2]
      sub(/^Partition:/, "", $2); sub(/^Offset:/, "", $3)
      k = ($4 == "null") ? "<null>" : $4
      print $2, $3, ts, k, $5 }' | sort -n -k1,1 -k2,2
}

# produce TOPIC PRODUCER CODEC MAGIC: idempotent producers for magic 2 (the broker refuses
# producer ids in the old formats).
produce() {
  local topic=$1 who=$2 codec=$3 idem=true props
  [ "$4" = 2 ] || idem=false
  case $who in
  kcat)
    kcat -P -b "$boot" -t "$topic" -K $'\t' -z "$codec" -X enable.idempotence=$idem \
      -X linger.ms=20 <"$work/input.tsv"
    ;;
  java-console)
    props=(--producer-property acks=all --producer-property enable.idempotence=$idem
      --producer-property linger.ms=20 --producer-property batch.size=65536)
    jtool "$producer" --bootstrap-server "$boot" --topic "$topic" --property parse.key=true \
      --compression-codec "$codec" "${props[@]}" <"$work/input.tsv" >/dev/null
    ;;
  java-perf-txn)
    jtool "$perf" --topic "$topic" --num-records "$n" --throughput -1 \
      --payload-file "$work/payloads.txt" --transactional-id "kbatch-codecs-$topic" \
      --transaction-duration-ms 200 \
      --producer-props bootstrap.servers="$boot" compression.type="$codec" acks=all \
      linger.ms=20 >"$work/perf.out"
    ;;
  esac
}

# check_disk TOPIC CODEC MAGIC: the segments hold batches of that codec and magic only.
check_disk() {
  local topic=$1 codec=$2 magic=$3 files out
  out=$work/dump.txt
  files=$(printf '%s,' "$K_DATA/$topic"-*/00000000000000000000.log)
  jtool "$dump" --files "${files%,}" >"$out" 2>/dev/null
  grep -oiE 'magic: [0-9]+' "$out" | sort -u | grep -qvx "magic: $magic" &&
    { echo "$topic: not all magic $magic on disk: $(grep -oiE 'magic: [0-9]+' "$out" | sort | uniq -c | tr '\n' ' ')"; return 1; }
  grep -qiE "magic: $magic" "$out" || { echo "$topic: no batch on disk"; return 1; }
  if [ "$codec" != none ]; then
    grep -qiE "compresscodec: $codec" "$out" ||
      { echo "$topic: no $codec batch on disk: $(grep -oiE 'compresscodec: [a-z]+' "$out" | sort | uniq -c | tr '\n' ' ')"; return 1; }
  fi
  return 0
}

# Known kbatch limitations, reported as KNOWN (and as XPASS, a failure, once they read fine):
# none. LZ4 in message format v0, with Kafka's broken LZ4 frame header checksum (KAFKA-3160),
# reads fine: kbatch decodes records itself and mends that byte.
known_bad=" "
known_error="lz4: invalid header checksum"

# one_case PRODUCER CODEC FORMAT(2|1|0)
cases=0
failed=0
known=0
notes=()
one_case() {
  local who=$1 codec=$2 magic=$3 topic dir why="" cfg=() count tmo
  [[ "$who:$codec:$magic" =~ ${CODEC_CASES:-.} ]] || return 0
  topic=codecs-$run-$who-$codec-m$magic
  dir=$work/$topic
  mkdir -p "$dir"
  case $magic in
  1) cfg=(--config message.format.version=0.10.2) ;;
  0) cfg=(--config message.format.version=0.9.0) ;;
  esac
  jtool "$topiccmd" --bootstrap-server "$boot" --create --topic "$topic" --partitions 3 \
    --replication-factor 1 "${cfg[@]}" >/dev/null 2>"$dir/create.err" ||
    { why="create topic: $(head -c 300 "$dir/create.err")"; }
  [ -n "$why" ] || produce "$topic" "$who" "$codec" "$magic" 2>"$dir/produce.err" ||
    why="produce: $(grep -m 3 -iE 'error|exception' "$dir/produce.err" | head -c 400)"
  [ -n "$why" ] || why=$(check_disk "$topic" "$codec" "$magic") || true

  if [ -z "$why" ]; then
    kcat -C -J -q -e -b "$boot" -t "$topic" -o beginning -X isolation.level=read_committed \
      2>"$dir/kcat.err" | norm_kcat >"$dir/kcat"
    timeout 120 "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -cp "$libs/*" \
      -Dlog4j2.configurationFile="$K_LOG4J_TOOLS" "$consumer" --bootstrap-server "$boot" \
      --topic "$topic" --from-beginning --max-messages "$n" --timeout-ms 30000 \
      --isolation-level read_committed --property print.timestamp=true \
      --property print.partition=true --property print.offset=true --property print.key=true \
      2>"$dir/java.err" | norm_java >"$dir/java"
    # A known-bad case only needs to show its failure: shorter bounds.
    tmo=120
    [[ $known_bad != *" $who:$codec:$magic "* ]] || tmo=15
    timeout "$tmo" bin/kbatch replay "$topic:*:earliest-latest" -b "$boot" --isolation committed \
      --out "$dir/replay.jsonl" 2>"$dir/replay.err" ||
      why="kbatch replay failed (exit $?): $(tail -n 1 "$dir/replay.err" | cut -c1-300)"
    [ -f "$dir/replay.jsonl" ] && norm_kbatch <"$dir/replay.jsonl" >"$dir/replay"
    timeout "$tmo" bin/kbatch watch -b "$boot" -t "$topic" --no-tui --until-end --reset earliest \
      --isolation committed --store "$dir/o.db" --sink "$dir/sink.jsonl" \
      >"$dir/watch.out" 2>"$dir/watch.err" ||
      why=${why:-"kbatch watch failed (exit $?, 124 = still running after ${tmo}s): $(
        { tail -n 1 "$dir/watch.err"; jq -r 'select(.type == "event") | .message' "$dir/watch.out" 2>/dev/null | tail -n 1; } |
          cut -c1-300 | tr '\n' ' ')"}
    [ -f "$dir/sink.jsonl" ] && norm_kbatch <"$dir/sink.jsonl" >"$dir/watch"
  fi
  if [ -z "$why" ] && [ "$magic" = 0 ]; then
    # Magic 0 has no timestamps: kcat leaves ts out, the Java consumer prints NO_TIMESTAMP,
    # kbatch writes "timestamp":null; compare without that column.
    grep -q '"timestamp":null' "$dir/replay.jsonl" 2>/dev/null ||
      why="magic 0: kbatch replay did not write \"timestamp\":null for records without a timestamp"
    for r in kcat java replay watch; do
      [ -f "$dir/$r" ] && cut -f1,2,4,5 "$dir/$r" >"$dir/$r.t" && mv "$dir/$r.t" "$dir/$r"
    done
  fi
  if [ -z "$why" ]; then
    count=$(wc -l <"$dir/kcat")
    if [ "$count" != "$n" ]; then
      why="kcat read $count records, $n were produced"
    elif [ "$who" != java-perf-txn ] &&
      ! diff -q <(rev "$dir/kcat" | cut -f1,2 | rev | sort) <(sort "$work/input.tsv") >/dev/null; then
      why="kcat's keys/values differ from the produced lines"
    else
      for r in java replay watch; do
        if ! diff -q "$dir/kcat" "$dir/$r" >/dev/null; then
          why="$r differs from kcat: $( (diff "$dir/kcat" "$dir/$r" || true) | head -n 4 | cut -c1-200 | tr '\n' ' ')"
          break
        fi
      done
    fi
  fi
  cases=$((cases + 1))
  if [[ $known_bad == *" $who:$codec:$magic "* ]]; then
    local ev
    ev=$(jq -r 'select(.type == "event") | .message' "$dir/watch.out" 2>/dev/null | grep -m 1 "$known_error" || true)
    if [ -n "$why" ] && [ -n "$ev" ]; then
      known=$((known + 1))
      printf '%-14s %-6s magic %s  KNOWN watch: %s\n' "$who" "$codec" "$magic" "$(echo "$ev" | cut -c1-200)"
    elif [ -n "$why" ]; then
      failed=$((failed + 1))
      printf '%-14s %-6s magic %s  FAIL  not the known failure (%s): %s\n' "$who" "$codec" "$magic" "$known_error" "$why"
    else
      failed=$((failed + 1))
      printf '%-14s %-6s magic %s  XPASS reads fine now: take it off known_bad in %s\n' "$who" "$codec" "$magic" "$0"
    fi
  elif [ -n "$why" ]; then
    failed=$((failed + 1))
    printf '%-14s %-6s magic %s  FAIL  %s\n' "$who" "$codec" "$magic" "$why"
  else
    printf '%-14s %-6s magic %s  ok    %s records; kcat = java console = replay = watch\n' "$who" "$codec" "$magic" "$n"
  fi
}

echo "kafka-codecs: Kafka $version at $boot, $n records per case"
t0=$SECONDS
for codec in none gzip snappy lz4 zstd; do
  for who in kcat java-console java-perf-txn; do
    one_case "$who" "$codec" 2
  done
done
if [ "$(k_mode "$version")" = zk ]; then
  for magic in 1 0; do
    for codec in none gzip snappy lz4; do
      for who in kcat java-console; do
        one_case "$who" "$codec" "$magic"
      done
    done
  done
fi
jtool "$topiccmd" --bootstrap-server "$boot" --delete --topic "codecs-$run-.*" >/dev/null 2>&1 || true
[ ${#notes[@]} = 0 ] || printf 'note: %s\n' "${notes[@]}" | sort -u
echo "kafka-codecs: $cases cases, $failed failed, $known known limitations, $((SECONDS - t0))s"
[ "$failed" = 0 ]
