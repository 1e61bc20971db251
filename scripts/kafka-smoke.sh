#!/usr/bin/env bash
# The smoke subset of the real-broker suite (what CI runs on older Kafka releases) against the
# broker of kafka-up.sh: the stream, replay with transactions, data loss, kbatch SIGKILLed and
# the broker SIGKILLed. Tests are named, not located: the run covers every package, and fails
# unless each named test ran and passed (a test that moved, was renamed or skipped is caught).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bootfile=${KAFKA_CACHE_DIR:-.cache/kafka}/bootstrap
boot=$(cat "$bootfile" 2>/dev/null) || { echo "kafka-smoke: no $bootfile; run 'make kafka-up' first" >&2; exit 1; }
tests=(
  # the stream (consumer): stored and explicit starts, redelivery of a planned batch
  TestExplicitOffsetsThenStored TestPlannedBatchIsRedelivered
  # data loss: stored offset below the log start, retention while running, replay below it
  TestStoredBelowLogStartIsDataLoss TestDataLossWhileRunning TestRetentionBelowStoredPosition
  TestReplayBelowLogStart
  # transactions: read_committed stream and watch, replay, the last-stable-offset probe
  TestStreamIsolation TestWatchIsolation TestReplayTransactions
  TestProbeSeesCommittedAfterAbortedOfSameProducer
  # replay against an independent reader, and its outputs
  TestReplayRanges TestReplayAgreesWithKcat TestReplayCommandOutputs TestRoundTripTopic
  # faults: kbatch SIGKILLed 16 times while a producer writes
  TestKilledKbatchLosesNothing
  # a consumer group written by kbatch, read by Kafka's own tools; a live group never moved
  TestGroupWrittenByKbatchIsReadByKafkasTools TestWatchCommitGroup TestCommitGroupOffsetsRefusesALiveGroup
)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
# The broker-restart test alone first: it takes the broker down.
KBATCH_TEST_BROKERS=$boot KBATCH_TEST_KAFKA_RESTART=$PWD/scripts/kafka-restart.sh \
  go test -race -count=1 -run '^TestBrokerRestartMidStream$' -v ./cli/ >"$log" 2>&1 || status=1
pattern="^($(IFS='|'; echo "${tests[*]}"))\$"
KBATCH_TEST_BROKERS=$boot go test -race -count=1 -run "$pattern" -v ./... >>"$log" 2>&1 || status=1
# Results, and each test message with its continuation lines (a failing restart's
# output, say: kafka-restart.sh's own error and the broker log's tail), 40 at most.
awk '/^(--- |FAIL|ok |panic:)/ { if ($0 !~ /no test files/) print; more = 0; next }
     /^ +[^ ]+_test\.go:[0-9]+:/ { print; more = 40; next }
     more > 0 && /^        / { print; more--; next }
     { more = 0 }' "$log"
missing=()
for t in TestBrokerRestartMidStream "${tests[@]}"; do
  grep -qE "^--- PASS: $t " "$log" || missing+=("$t")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "kafka-smoke: did not pass (failed, skipped or not found): ${missing[*]}" >&2
  status=1
fi
[ "$status" = 0 ] && echo "kafka-smoke: all $((${#tests[@]} + 1)) tests passed against $boot"
exit "$status"
