#!/usr/bin/env bash
# Log truncation after an unclean leader election (KIP-320), on the 3-node cluster of
# kafka3-up.sh. A 1-partition topic with replicas [1,2] (replication factor 2,
# unclean.leader.election.enable=true, min.insync.replicas=1):
#   1. 100 records with acks=all (both replicas hold them),
#   2. node 2 (the follower) stopped; 100 records with acks=1 land on node 1 only,
#   3. kbatch watch (store, sink) reads all 200 while it runs,
#   4. node 1 SIGKILLed; node 2 started, elected leader although out of sync (unclean: its
#      log ends at 100); 150 new records with acks=1 at offsets 100..249,
#   5. node 1 started again (it truncates its log to follow node 2).
# Two rounds, each on a new topic: "live" (kbatch runs throughout and finds node 2's log shorter
# than its position) and "frozen" (kbatch is stopped with SIGSTOP from step 4 until the new
# records are written, so its first fetch finds the new history past its position: the leader
# epoch check finds the divergence).
# kbatch must report data loss (one data-loss event: expected 200, reading on at 100, 100
# offsets lost) and read the new records from 100, never reading the new history as if it
# continued the old one. Checks: every offset of the final log delivered with its value,
# records delivered before the event are the old ones (100..199 no longer in the log),
# records after it the new ones, no batch jump other than the one marked data-loss.
# Needs bin/kbatch (make build), kcat, jq. Usage: scripts/kafka3-unclean.sh (make test-kafka3)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka3-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka3-lib.sh"
watch=
k3_suite kafka3-unclean
elect=$(k_class "$libs" org.apache.kafka.tools.LeaderElectionCommand kafka.admin.LeaderElectionCommand)
# run_case NAME FROZEN: one round; FROZEN=1 stops kbatch (SIGSTOP) from the kill of node 1 until
# the new records are written, so that its first fetch after the election finds the new
# leader's log already past its position (the leader epoch check finds the divergence);
# FROZEN=0 lets it run (it finds the new log shorter than its position: out of range).
run_case() {
  local name=$1 frozen=$2 work topic
  watch=
  work=${UNCLEAN_DIR:-$KBATCH_ROOT/.cache/kafka3/unclean}/$name
  rm -rf "$work"
  mkdir -p "$work"
  topic=unclean-$(head -c 4 /dev/urandom | od -An -tx1 | tr -d ' \n')
  node healthy
  jtool "$topiccmd" --bootstrap-server "$boot" --create --topic "$topic" --replica-assignment 1:2 \
    --config unclean.leader.election.enable=true --config min.insync.replicas=1 >/dev/null
  say "topic $topic (replicas 1,2) on $boot (Kafka $version); work dir ${work#"$KBATCH_ROOT"/}"
  watch=
  cleanup() {
    [ -z "$watch" ] || kill -CONT "$watch" 2>/dev/null || true
    [ -z "$watch" ] || kill "$watch" 2>/dev/null || true
    for n in $K3_NODES; do k3_alive "$n" || node start "$n" >/dev/null 2>&1 || true; done
  }
  trap cleanup EXIT

  describe() { jtool "$topiccmd" --bootstrap-server "$boot" --describe --topic "$topic"; }
  leader() { describe | sed -n 's/.*Partition: *0.*Leader: *\([-0-9]*\).*/\1/p' | head -n 1; }
  # produce FROM TO TAG ACKS [BROKER]: values TAG-FROM .. TAG-TO, partition 0.
  produce() {
    local b=${5:-$boot}
    seq "$1" "$2" | sed "s/^/$3-/" |
      kcat -P -b "$b" -t "$topic" -p 0 -X acks="$4" -X enable.idempotence=false -X linger.ms=5 \
        -X message.timeout.ms=60000 2>>"$work/producer.err" || fail "kcat produce $3 $1..$2 failed: $(tail -n 2 "$work/producer.err")"
  }
  # acked_until: the highest until of the ranges kbatch acked.
  acked_until() {
    jq -R -r 'fromjson? | select(.type == "batch") | .ranges[] | .until' "$work/watch.jsonl" 2>/dev/null |
      sort -n | tail -n 1
  }
  wait_for() { # SECONDS WHAT CMD...: until CMD succeeds
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@"; do
      [ "$SECONDS" -lt "$deadline" ] || fail "$what: not after ${deadline}s"
      sleep 0.5
    done
  }

  produce 1 100 old all
  say "1. 100 records with acks=all; stopping node 2 (the follower)"
  node stop 2
  [ "$(leader)" = 1 ] || fail "node 1 is not the leader after node 2 stopped: $(describe)"
  produce 101 200 old 1
  say "2. 100 records with acks=1 on node 1 alone; kbatch reads them"
  bin/kbatch watch --no-tui -b "$boot" -t "$topic" --store "$work/offsets.db" --sink "$work/sink.jsonl" \
    --reset earliest --interval 250ms --log "$work/debug.log" >"$work/watch.jsonl" 2>"$work/watch.err" &
  watch=$!
  read_200() { [ "$(acked_until)" = 200 ]; }
  wait_for 60 "kbatch acked offsets 0..199" read_200
  say "3. kbatch acked [0,200); SIGKILL node 1, start node 2 (out of sync)"
  node kill 1
  [ "$frozen" = 0 ] || kill -STOP "$watch"
  node start 2
  # The topic allows an unclean election; ask for one too, in case the controller waits.
  no_leader() { l=$(leader) && [ "$l" = 2 ]; }
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    no_leader && break
    jtool "$elect" --bootstrap-server "$boot" --election-type UNCLEAN --topic "$topic" --partition 0 \
      >>"$work/elect.out" 2>&1 || true
    sleep 2
  done
  no_leader || fail "node 2 was not elected leader: $(describe)"
  say "4. node 2 leads (unclean); 150 new records with acks=1 at 100..249"
  produce 101 250 new 1
  [ "$frozen" = 0 ] || kill -CONT "$watch"
  node start 1
  node healthy
  read_250() { [ "$(acked_until)" = 250 ]; }
  wait_for 120 "kbatch acked up to 250" read_250
  kill -TERM "$watch"
  wait "$watch" || true
  watch=

  kcat -C -J -q -e -b "$boot" -t "$topic" -o beginning | jq -r '[.offset, .payload] | @tsv' | sort -n >"$work/log.tsv"
  jq -r '[.offset, .value] | @tsv' "$work/sink.jsonl" >"$work/delivered.tsv"
  jq -R -c 'fromjson? | select(.type == "event" and (.code == "data-loss" or .code == "offset-out-of-range"))' \
    "$work/watch.jsonl" >"$work/loss.jsonl"
  jq -R -r 'fromjson? | select(.type == "batch") | .batch as $b | .ranges[] | [$b, .from, .until, (.jump // "")] | @tsv' \
    "$work/watch.jsonl" >"$work/ranges.tsv"
  in_log=$(wc -l <"$work/log.tsv")
  delivered=$(wc -l <"$work/delivered.tsv")
  losses=$(wc -l <"$work/loss.jsonl")
  event=$(head -n 1 "$work/loss.jsonl")
  # Delivered records, in order: offsets 0..199 of the old history (0..99 as the final log
  # holds them, 100..199 written with acks=1 before the election), then 100..249 of the new
  # history exactly as the final log holds them.
  {
    head -n 100 "$work/log.tsv"
    head -n 200 "$work/delivered.tsv" | sed -n '101,200p' | awk -F'\t' '$2 ~ /^old-/'
    sed -n '101,$p' "$work/log.tsv"
  } >"$work/expected.tsv"
  mismatch=$(diff "$work/expected.tsv" "$work/delivered.tsv" | grep -c '^[<>]' || true)
  old_after=$(sed -n '101,200p' "$work/delivered.tsv" | awk -F'\t' -v n=100 '$1 != n++ || $2 !~ /^old-/' | wc -l)
  lost=$(comm -23 <(sort -u "$work/log.tsv") <(sort -u "$work/delivered.tsv") | wc -l)
  jumps=$(awk -F'\t' '$4 != "" { print $2 " " $4 }' "$work/ranges.tsv" | tr '\n' ',' | sed 's/,$//')
  {
    echo "kafka3-unclean: $name (kbatch $([ "$frozen" = 1 ] && echo "stopped during the election" || echo running)): Kafka $version, topic $topic, replicas [1,2], unclean election to node 2"
    echo "  produced: 100 acks=all + 100 acks=1 (lost with node 1) + 150 acks=1 after the election; in the final log $in_log"
    echo "  kbatch delivered $delivered records ($((delivered - 250)) more than the final log: the old 100..199), $lost of the log not delivered, $mismatch lines differ from the expected order"
    echo "  loss events ($losses): $event"
    echo "  batch ranges marked as jumps: ${jumps:-none}"
  } | tee "$work/summary.txt"
  problems=()
  [ "$in_log" = 250 ] || problems+=("the final log holds $in_log records, want 250 (was the election unclean?)")
  [ "$losses" = 1 ] || problems+=("$losses loss events, want 1")
  [ "$(jq -r '[.code, .expected, .to, .lost] | @tsv' <<<"${event:-{\}}")" = "$(printf 'data-loss\t200\t100\t100')" ] ||
    problems+=("event $event, want data-loss expected 200 to 100 lost 100")
  [ "$lost" = 0 ] || problems+=("$lost records of the log not delivered")
  [ "$old_after" = 0 ] || problems+=("offsets 100..199 before the event are not the old records in order")
  [ "$mismatch" = 0 ] || problems+=("delivered records differ from the old 0..199 then the final log's 100..249 (see expected.tsv, delivered.tsv)")
  [ "$jumps" = "100 data-loss" ] || problems+=("jumps '$jumps', want one at 100 marked data-loss")
  [ ${#problems[@]} = 0 ] || fail "$(IFS=';'; echo "${problems[*]}")"
  echo "kafka3-unclean: $name: pass"
}

run_case live 0
run_case frozen 1
echo "kafka3-unclean: pass"
