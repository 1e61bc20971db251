#!/usr/bin/env bash
# The fault suite on the 3-node cluster of kafka3-up.sh. While kcat (idempotent, acks=all)
# writes sequence-numbered records to a 6-partition topic (replication factor 2) and
# `kbatch watch --no-tui --sink` streams it with a store, the suite
#   1. reassigns every partition to another pair of brokers (kafka-reassign-partitions),
#   2. elects the preferred leaders (kafka-leader-election), which now sit elsewhere,
#   3. restarts every broker in turn (SIGTERM, start, wait for full replication),
#   4. SIGKILLs one broker, keeps it down 30 s, starts it again; meanwhile kbatch itself is
#      SIGKILLed 5 times and started again on the same store (with a broker down; a kill
#      between a batch's plan and its ack makes the next run redeliver that batch),
# then stops the producer, stops kbatch (SIGTERM) and runs it once more with --until-end on
# the same store. It checks what docs/design.md §2 promises: the stream survived every fault by
# itself, acked ranges are contiguous per partition (no jump), every offset in the log was
# delivered with the value kcat reads, any offset delivered twice lies in a batch marked
# redelivered, and every record the producer had acknowledged is in the log. It prints the
# figures: faults, records produced / acknowledged / in the log / delivered, duplicates, lost,
# and the events kbatch reported.
# Needs bin/kbatch (make build), kcat, jq. Usage: scripts/kafka3-faults.sh  (make test-kafka3)
#   FAULTS_RATE    records per second the producer aims at (default 400)
#   FAULTS_DOWN    seconds the SIGKILLed broker stays down (default 30)
#   FAULTS_KBATCH_KILLS  times kbatch is SIGKILLed meanwhile (default 5)
#   FAULTS_SMOKE   1: the smoke run of .ci/run: leaves out the reassignment (1) and the rolling
#                  restart (3), the slow faults; the broker SIGKILL and kbatch kills stay
#   FAULTS_FIRST_KILL    seconds after the broker's SIGKILL of the first kbatch kill (default 1):
#                  the restarted kbatch meets the dead node still named as leader and waits out
#                  the failover (offset lookups retry for 30 s, kafka/client.go lookupRetry)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka3-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka3-lib.sh"
rate=${FAULTS_RATE:-400}
down=${FAULTS_DOWN:-30}
kills=${FAULTS_KBATCH_KILLS:-5}
first_kill=${FAULTS_FIRST_KILL:-1}
k3_suite kafka3-faults
reassign=$(k_class "$libs" org.apache.kafka.tools.reassign.ReassignPartitionsCommand kafka.admin.ReassignPartitionsCommand)
elect=$(k_class "$libs" org.apache.kafka.tools.LeaderElectionCommand kafka.admin.LeaderElectionCommand)

work=${FAULTS_DIR:-$KBATCH_ROOT/.cache/kafka3/faults}
rm -rf "$work"
mkdir -p "$work"
topic=faults-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
partitions=6
node healthy
jtool "$topiccmd" --bootstrap-server "$boot" --create --topic "$topic" --partitions "$partitions" \
  --replication-factor 2 --config min.insync.replicas=1 >/dev/null
say "topic $topic ($partitions partitions, RF 2) on $boot (Kafka $version); work dir ${work#"$KBATCH_ROOT"/}"

pids=()
drainers=()
cleanup() {
  local p
  for p in "${pids[@]}" "${drainers[@]}"; do kill "$p" 2>/dev/null || true; done
  for n in $K3_NODES; do k3_alive "$n" || node start "$n" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

k3_produce "$rate" "$topic" "$work"
pids+=("$producer")

# start_watch RUN [slow]: kbatch in the background, on the one store, a sink and output per
# run. slow: the sink is a pipe drained at about 500 lines/s (slower than the producer), so
# a batch takes a while from its plan to its ack and a kill is likely to land in between.
start_watch() {
  local sink=$work/sink$1.jsonl
  if [ "${2:-}" = slow ]; then
    sink=$work/sink$1.fifo
    mkfifo "$sink"
    (
      n=0
      while IFS= read -r line; do
        printf '%s\n' "$line"
        n=$((n + 1))
        [ $((n % 100)) != 0 ] || sleep 0.2
      done <"$sink" >"$work/sink$1.jsonl"
    ) &
    drainers+=($!)
  fi
  bin/kbatch watch --no-tui -b "$boot" -t "$topic" --store "$work/offsets.db" --sink "$sink" \
    --reset earliest --interval 250ms >"$work/watch$1.jsonl" 2>"$work/watch$1.err" &
  watch=$!
  wrun=$1
  pids+=("$watch")
}
start_watch 1
alive() { kill -0 "$watch" 2>/dev/null || fail "kbatch watch exited during the faults: $(tail -n 3 "$work/watch$wrun.err")"; }

faults=()
t0=$SECONDS
sleep 10
alive

# 1. Reassignment: replicas [a,b] -> [c,a] with c the broker not holding the partition.
describe() { jtool "$topiccmd" --bootstrap-server "$boot" --describe --topic "$topic"; }
describe >"$work/before.txt"
{
  printf '{"version":1,"partitions":['
  sep=""
  while read -r p reps; do
    a=${reps%%,*} b=${reps##*,}
    for c in $K3_NODES; do [ "$c" != "$a" ] && [ "$c" != "$b" ] && break; done
    printf '%s{"topic":"%s","partition":%d,"replicas":[%d,%d]}' "$sep" "$topic" "$p" "$c" "$a"
    sep=,
  done < <(sed -n 's/.*Partition: *\([0-9]*\).*Replicas: *\([0-9,]*\).*/\1 \2/p' "$work/before.txt")
  printf ']}\n'
} >"$work/reassign.json"
smoke=${FAULTS_SMOKE:-0}
if [ "$smoke" != 1 ]; then
say "fault 1: reassigning every partition to another broker pair"
jtool "$reassign" --bootstrap-server "$boot" --reassignment-json-file "$work/reassign.json" --execute >"$work/reassign.out"
# A reassignment copies every partition; on a loaded 2-core machine (and each --verify is a
# JVM start) 180 s was once not enough. KAFKA3_REASSIGN_WAIT bounds it.
wait_s=${KAFKA3_REASSIGN_WAIT:-420}
deadline=$((SECONDS + wait_s))
until jtool "$reassign" --bootstrap-server "$boot" --reassignment-json-file "$work/reassign.json" --verify \
    >"$work/verify.out" 2>&1 && ! grep -qi 'in progress' "$work/verify.out"; do
  [ "$SECONDS" -lt "$deadline" ] || fail "reassignment not complete after $wait_s s: $(head -n 12 "$work/verify.out")"
  sleep 2
done
describe >"$work/after-reassign.txt"
faults+=("reassignment of $partitions partitions")
alive
sleep 5
else
  say "smoke run: no reassignment, no rolling restart"
  describe >"$work/after-reassign.txt"
fi

# 2. Preferred leader election: after 1 the preferred replica (c) is mostly not the leader.
say "fault 2: preferred leader election"
jtool "$elect" --bootstrap-server "$boot" --election-type PREFERRED --all-topic-partitions \
  >"$work/elect.out" 2>&1 || true
describe >"$work/after-elect.txt"
moved=$(diff <(sed -n 's/.*Partition: *\([0-9]*\).*Leader: *\([0-9]*\).*/\1 \2/p' "$work/after-reassign.txt") \
  <(sed -n 's/.*Partition: *\([0-9]*\).*Leader: *\([0-9]*\).*/\1 \2/p' "$work/after-elect.txt") | grep -c '^>' || true)
faults+=("preferred leader election ($moved leaders moved)")
alive
sleep 5

# 3. Rolling restart.
[ "$smoke" = 1 ] || for n in $K3_NODES; do
  say "fault 3: rolling restart, node $n"
  node restart "$n"
  node healthy
  alive
  sleep 3
done
[ "$smoke" = 1 ] || faults+=("rolling restart of 3 brokers")

# 4. One broker SIGKILLed, down for $down s.
victim=$(sed -n 's/.*Partition: *0.*Leader: *\([0-9]*\).*/\1/p' <(describe) | head -n 1)
say "fault 4: SIGKILL node $victim (leader of partition 0), down ${down}s"
node kill "$victim"
# While it is down, kbatch is SIGKILLed $kills times at random moments and started again on
# the same store each time (a kill between a batch's plan and its ack redelivers the batch);
# those runs write their sink into a slow pipe, so kills often land in that window.
# The first kill comes before the dead node is fenced (broker.session.timeout.ms=3000): the
# restarted kbatch must wait out the failover at start-up (see FAULTS_FIRST_KILL).
t_kill=$SECONDS
sleep "$first_kill"
for k in $(seq 1 "$kills"); do
  alive
  say "fault 5: SIGKILL kbatch ($k of $kills), start it again on the same store (node $victim still down)"
  kill -KILL "$watch"
  wait "$watch" 2>/dev/null || true
  start_watch "2-$k" slow
  sleep "$(( (RANDOM % 3000 + 2000) / 1000 )).$((RANDOM % 10))"
done
# One more kill, then a run with a plain sink file (a slow pipe falls behind the producer).
kill -KILL "$watch"
wait "$watch" 2>/dev/null || true
start_watch 2-end
left=$((down - (SECONDS - t_kill)))
[ "$left" -le 0 ] || sleep "$left"
alive
node start "$victim"
node healthy
faults+=("SIGKILL of node $victim, down ${down}s" "SIGKILL of kbatch x$((kills + 1)) (restarted each time while node $victim was down)")
alive
sleep 5

# Stop the producer, let it flush, stop kbatch, final --until-end run.
touch "$work/stop"
say "stopping the producer"
wait "$producer" || true
alive
kill -TERM "$watch"
wait "$watch" || true
say "final run: --until-end on the same store"
timeout 300 bin/kbatch watch --no-tui -b "$boot" -t "$topic" --store "$work/offsets.db" --sink "$work/sink3.jsonl" \
  --until-end --interval 250ms >"$work/watch3.jsonl" 2>"$work/watch3.err" ||
  fail "final kbatch run failed: $(tail -n 3 "$work/watch3.err")"
elapsed=$((SECONDS - t0))
# The slow sinks' drainers end when their kbatch is gone and the pipe is empty.
for d in "${drainers[@]}"; do wait "$d" || true; done

# The log as kcat reads it: partition, offset, value.
kcat -C -J -q -e -b "$boot" -t "$topic" -o beginning | jq -r '[.partition, .offset, .payload] | @tsv' |
  sort -n -k1,1 -k2,2 >"$work/log.tsv"
# A SIGKILLed run may leave a cut last line: whole lines only.
awk 1 "$work"/sink*.jsonl | jq -R -r 'fromjson? | [.partition, .offset, .value] | @tsv' |
  sort -n -k1,1 -k2,2 >"$work/delivered.tsv"
awk 1 "$work"/watch*.jsonl | jq -R -c 'fromjson? | select(.type == "batch")' >"$work/batches.jsonl"

generated=$(cat "$work/generated")
failed_deliveries=$(grep -c 'Delivery failed' "$work/producer.err" || true)
in_log=$(wc -l <"$work/log.tsv")
distinct_seq=$(cut -f3 "$work/log.tsv" | sort -u | wc -l)
delivered=$(wc -l <"$work/delivered.tsv")
distinct_delivered=$(cut -f1,2 "$work/delivered.tsv" | sort -u | wc -l)
duplicates=$((delivered - distinct_delivered))
lost=$(comm -23 <(cut -f1,2 "$work/log.tsv" | sort -u) <(cut -f1,2 "$work/delivered.tsv" | sort -u) | wc -l)
wrong=$(comm -23 <(sort -u "$work/delivered.tsv") <(sort -u "$work/log.tsv") | wc -l)
missing_acked=$((generated - failed_deliveries - distinct_seq))

# Ranges: per partition, acked batches in order; each starts where the last ended, except a
# redelivered batch, which may repeat; no batch jumped.
jq -r '.batch as $b | .redelivered as $r | .jumped as $j | .ranges[] |
  [.partition, $b, .from, .until, ($r | tostring), ($j | tostring)] | @tsv' "$work/batches.jsonl" |
  sort -n -k1,1 -k2,2 >"$work/ranges.tsv"
gaps=$(awk -F'\t' '
  $1 != p { p = $1; next_ = 0 }
  { if ($6 == "true" || ($3 != next_ && !($5 == "true" && $3 < next_))) print; if ($4 > next_) next_ = $4 }' \
  "$work/ranges.tsv" | tee "$work/gaps.tsv" | wc -l)
# Duplicates must lie inside redelivered batches' ranges.
cut -f1,2 "$work/delivered.tsv" | uniq -d >"$work/dups.tsv"
bad_dups=$(awk -F'\t' 'NR == FNR { if ($5 == "true") { n++; P[n] = $1; F[n] = $3; U[n] = $4 }; next }
  { ok = 0; for (i = 1; i <= n; i++) if (P[i] == $1 && $2 >= F[i] && $2 < U[i]) { ok = 1; break }
    if (!ok) print }' "$work/ranges.tsv" "$work/dups.tsv" | wc -l)
ends_ok=1
while read -r p end; do
  last=$(awk -F'\t' -v p="$p" '$1 == p && $4 > m { m = $4 } END { print m + 0 }' "$work/ranges.tsv")
  [ "$last" = "$end" ] || { ends_ok=0; echo "partition $p: acked up to $last, log ends at $end" >&2; }
done < <(awk -F'\t' '{ e[$1] = $2 + 1 } END { for (p in e) print p, e[p] }' "$work/log.tsv")
events=$(awk 1 "$work"/watch*.jsonl | jq -R -r 'fromjson? | select(.type == "event") | .code' | sort | uniq -c |
  awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')
batches=$(wc -l <"$work/batches.jsonl")
redelivered=$(jq -r 'select(.redelivered) | .batch' "$work/batches.jsonl" | wc -l)

{
  echo "kafka3-faults: Kafka $version, 3 brokers, topic $topic ($partitions partitions, RF 2), ${elapsed}s"
  printf '  fault: %s\n' "${faults[@]}"
  echo "  produced $generated records at ~$rate/s; kcat delivery failures $failed_deliveries; in the log $in_log ($distinct_seq distinct)"
  echo "  kbatch: $batches acked batches ($redelivered redelivered), $delivered records delivered, $duplicates duplicates, $lost lost, $wrong not matching the log"
  echo "  acked ranges: $gaps gaps or jumps; duplicates outside redelivered batches: $bad_dups; acknowledged records missing from the log: $missing_acked"
  echo "  events: ${events:-none}"
} | tee "$work/summary.txt"
problems=()
[ "$lost" = 0 ] || problems+=("$lost offsets lost")
[ "$wrong" = 0 ] || problems+=("$wrong delivered records differ from the log")
[ "$gaps" = 0 ] || problems+=("$gaps gaps or jumps in the acked ranges (see gaps.tsv)")
[ "$bad_dups" = 0 ] || problems+=("$bad_dups duplicates outside redelivered batches")
[ "$ends_ok" = 1 ] || problems+=("acked ranges do not reach the end of the log")
[ "$missing_acked" -le 0 ] || problems+=("$missing_acked acknowledged records missing from the log")
[ "$in_log" = "$distinct_seq" ] || problems+=("the log holds $((in_log - distinct_seq)) duplicate values (idempotent producer)")
[ "$in_log" -gt 0 ] || problems+=("nothing was produced")
[ ${#problems[@]} = 0 ] || fail "$(IFS=';'; echo "${problems[*]}")"
echo "kafka3-faults: pass"
