#!/usr/bin/env bash
# Rack-aware fetching (KIP-392) on the 3-node cluster of kafka3-up.sh, whose nodes 1, 2, 3 sit
# in racks A, B, C with RackAwareReplicaSelector. A 3-partition topic: partition 0 on
# replicas [1,2], 1 on [3,2], 2 on [1,3]. While kcat writes to it (~RACK_RATE records/s),
# `kbatch watch --rack B --log` streams it with a store and a sink, and
#   1. kbatch fetches partitions 0 and 1 from node 2 (the rack-B follower), partition 2 from
#      its leader (no replica in rack B),
#   2. node 2 is SIGKILLed and stays down RACK_DOWN s: kbatch goes back to the leaders,
#   3. node 2 is started again: once it is in sync the leaders name it again,
#   4. node 2 is frozen (SIGSTOP) RACK_FREEZE s, then thawed: a replica that answers nothing;
#      kbatch goes back to the leaders after its network timeout,
# then the producer stops and kbatch runs to the end of the log. Checks, from the --log
# debug log: fetches of partitions 0 and 1 answered with records by node 2 before the kill
# and again after the restart, by their leaders while node 2 was down; partition 2 never
# fetched from node 2; and from the sink: every offset of the log delivered with the value
# kcat reads, no gap or jump in the acked ranges, duplicates none.
# Needs bin/kbatch (make build), kcat, jq. Usage: scripts/kafka3-rack.sh (make test-kafka3)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka3-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka3-lib.sh"
rate=${RACK_RATE:-200}
down=${RACK_DOWN:-20}
freeze=${RACK_FREEZE:-45}
k3_suite kafka3-rack
grep -q '^broker.rack=B' "$(k3_props 2)" || fail "node 2 has no broker.rack=B: restart the cluster (make kafka3-down kafka3-up)"
work=${RACK_DIR:-$KBATCH_ROOT/.cache/kafka3/rack}
rm -rf "$work"
mkdir -p "$work"
topic=rack-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
node healthy
jtool "$topiccmd" --bootstrap-server "$boot" --create --topic "$topic" --replica-assignment 1:2,3:2,1:3 \
  --config min.insync.replicas=1 >/dev/null
say "topic $topic (partitions on [1,2] [3,2] [1,3]) on $boot (Kafka $version); work dir ${work#"$KBATCH_ROOT"/}"

pids=()
cleanup() {
  local p n
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for n in $K3_NODES; do
    [ -s "$(k3_pidfile "$n")" ] && kill -CONT "$(cat "$(k3_pidfile "$n")")" 2>/dev/null
    k3_alive "$n" || node start "$n" >/dev/null 2>&1 || true
  done
}
trap cleanup EXIT

k3_produce "$rate" "$topic" "$work"
pids+=("$producer")
bin/kbatch watch --no-tui -b "$boot" -t "$topic" --rack B --log "$work/debug.log" --store "$work/offsets.db" \
  --sink "$work/sink.jsonl" --reset earliest --interval 250ms >"$work/watch.jsonl" 2>"$work/watch.err" &
watch=$!
pids+=("$watch")
alive() { kill -0 "$watch" 2>/dev/null || fail "kbatch watch exited: $(tail -n 3 "$work/watch.err")"; }
# mark NAME: a line in the debug log's margin file, to cut it into phases.
# kbatch may not have opened its log yet: then 0 lines.
mark() { echo "$1 $(cat "$work/debug.log" 2>/dev/null | wc -l)" >>"$work/phases"; }
t0=$SECONDS
mark start
sleep 15
alive
mark kill
say "phase 2: SIGKILL node 2 (rack B), down ${down}s"
node kill 2
sleep "$down"
alive
mark restart
say "phase 3: start node 2 again"
node start 2
node healthy
sleep 15
alive
mark freeze
pid2=$(cat "$(k3_pidfile 2)")
say "phase 4: SIGSTOP node 2 for ${freeze}s"
kill -STOP "$pid2"
sleep "$freeze"
kill -CONT "$pid2"
node healthy
sleep 10
alive
mark end
touch "$work/stop"
say "stopping the producer"
wait "$producer" || true
kill -TERM "$watch"
wait "$watch" || true
say "final run: --until-end on the same store"
timeout 300 bin/kbatch watch --no-tui -b "$boot" -t "$topic" --rack B --store "$work/offsets.db" \
  --sink "$work/sink.jsonl" --until-end --interval 250ms >"$work/watch2.jsonl" 2>"$work/watch2.err" ||
  fail "final kbatch run failed: $(tail -n 3 "$work/watch2.err")"
elapsed=$((SECONDS - t0))

# Fetches answered with records, per phase: "phase broker partition".
awk -v phases="$work/phases" '
  BEGIN { while ((getline l < phases) > 0) { split(l, f, " "); n++; name[n] = f[1]; at[n] = f[2] } }
  { ph = "start"; for (i = 1; i <= n; i++) if (NR > at[i]) ph = name[i] }
  / msg=fetch / && / answer=/ {
    b = $0; sub(/.* broker=/, "", b); sub(/ .*/, "", b)
    a = $0; sub(/.* answer="?/, "", a)
    m = split(a, parts, "; ")
    for (j = 1; j <= m; j++) if (parts[j] ~ /, [1-9][0-9]* records/) {
      p = parts[j]; sub(/:.*/, "", p); sub(/.*\[/, "", p); sub(/\].*/, "", p)
      print ph, b, p
    }
  }' "$work/debug.log" | sort | uniq -c >"$work/served.txt"
served() { awk -v ph="$1" -v b="$2" -v p="$3" '$2 == ph && $3 == b && $4 == p { n += $1 } END { print n + 0 }' "$work/served.txt"; }
moves_to=$(grep -c 'msg="fetch preferred read replica"' "$work/debug.log" || true)
moves_back=$(grep -c 'msg="fetch back to the leader' "$work/debug.log" || true)

kcat -C -J -q -e -b "$boot" -t "$topic" -o beginning | jq -r '[.partition, .offset, .payload] | @tsv' |
  sort -n -k1,1 -k2,2 >"$work/log.tsv"
awk 1 "$work/sink.jsonl" | jq -R -r 'fromjson? | [.partition, .offset, .value] | @tsv' | sort -n -k1,1 -k2,2 >"$work/delivered.tsv"
cat "$work/watch.jsonl" "$work/watch2.jsonl" | jq -R -c 'fromjson? | select(.type == "batch")' >"$work/batches.jsonl"
jq -r '.batch as $b | .ranges[] | [.partition, $b, .from, .until, (.jump // "")] | @tsv' "$work/batches.jsonl" |
  sort -n -k1,1 -k2,2 >"$work/ranges.tsv"
gaps=$(awk -F'\t' '$1 != p { p = $1; next_ = 0 } { if ($5 != "" || $3 != next_) print; next_ = $4 }' "$work/ranges.tsv" | wc -l)
generated=$(cat "$work/generated")
in_log=$(wc -l <"$work/log.tsv")
delivered=$(wc -l <"$work/delivered.tsv")
duplicates=$((delivered - $(cut -f1,2 "$work/delivered.tsv" | sort -u | wc -l)))
lost=$(comm -23 <(cut -f1,2 "$work/log.tsv" | sort -u) <(cut -f1,2 "$work/delivered.tsv" | sort -u) | wc -l)
wrong=$(comm -23 <(sort -u "$work/delivered.tsv") <(sort -u "$work/log.tsv") | wc -l)
events=$(cat "$work/watch.jsonl" "$work/watch2.jsonl" | jq -R -r 'fromjson? | select(.type == "event") | .code' | sort | uniq -c |
  awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')
{
  echo "kafka3-rack: Kafka $version, racks A B C, kbatch --rack B, topic $topic, ${elapsed}s"
  for ph in start kill restart freeze; do
    printf '  %-8s fetches with records: p0 from node2 %s, leader1 %s; p1 from node2 %s, leader3 %s; p2 from node2 %s, leader1 %s\n' "$ph" \
      "$(served "$ph" 2 0)" "$(served "$ph" 1 0)" "$(served "$ph" 2 1)" "$(served "$ph" 3 1)" "$(served "$ph" 2 2)" "$(served "$ph" 1 2)"
  done
  echo "  moves to the preferred read replica $moves_to, back to the leader $moves_back"
  echo "  produced $generated at ~$rate/s; in the log $in_log; delivered $delivered, $duplicates duplicates, $lost lost, $wrong not matching the log; gaps/jumps $gaps"
  echo "  events: ${events:-none}"
} | tee "$work/summary.txt"
problems=()
for p in 0 1; do
  [ "$(served start 2 "$p")" -gt 0 ] || problems+=("partition $p not fetched from node 2 (rack B) at first")
  [ "$(served restart 2 "$p")" -gt 0 ] || problems+=("partition $p not fetched from node 2 again after its restart")
done
[ "$(served kill 1 0)" -gt 0 ] || problems+=("partition 0 not fetched from its leader while node 2 was down")
[ "$(served kill 3 1)" -gt 0 ] || problems+=("partition 1 not fetched from its leader while node 2 was down")
for ph in start kill restart freeze; do
  [ "$(served "$ph" 2 2)" = 0 ] || problems+=("partition 2 (no replica in rack B) fetched from node 2")
done
[ "$lost" = 0 ] || problems+=("$lost offsets lost")
[ "$wrong" = 0 ] || problems+=("$wrong delivered records differ from the log")
[ "$duplicates" = 0 ] || problems+=("$duplicates duplicates")
[ "$gaps" = 0 ] || problems+=("$gaps gaps or jumps in the acked ranges")
[ "$in_log" -gt 0 ] || problems+=("nothing was produced")
[ ${#problems[@]} = 0 ] || fail "$(IFS=';'; echo "${problems[*]}")"
echo "kafka3-rack: pass"
