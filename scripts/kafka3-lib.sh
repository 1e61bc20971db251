# shellcheck shell=bash disable=SC2034
# A 3-node Apache Kafka cluster in KRaft mode on 127.0.0.1 (each node broker + controller, a
# static 3-voter quorum), for the fault suite. Source it (it sources kafka-lib.sh); don't run it.
# Jars are those of kafka-up.sh (.cache/kafka/<version>/libs). State under .cache/kafka3/:
#   node<N>/server.properties, node<N>/data/, node<N>/broker.log, node<N>/pid
#   bootstrap (host:port,host:port,host:port), version
# Works for 3.3 and later (static controller.quorum.voters); 4.4.0 by default.

# shellcheck source-path=SCRIPTDIR source=kafka-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka-lib.sh"

K3_DIR=${KAFKA3_DIR:-$KBATCH_ROOT/.cache/kafka3}
K3_BOOTFILE=$K3_DIR/bootstrap
K3_VERFILE=$K3_DIR/version
K3_NODES="1 2 3"

k3_init() { k_hold_dir "$K3_DIR" 8 kafka3; }

# k3_suite NAME: the common start of a suite on the 3-node cluster, in the repository root (it cds there):
# fail and say (messages prefixed with NAME) defined; kcat, jq, bin/kbatch and the cluster
# checked; boot, version, libs and topiccmd set; jtool (a Kafka tool of libs) and node
# (kafka3-node.sh) defined.
k3_suite() {
  cd "$KBATCH_ROOT"
  K3_SUITE=$1
  fail() { echo "$K3_SUITE: FAIL: $*" >&2; exit 1; }
  say() { echo "$K3_SUITE: $(date -u +%T) $*" >&2; }
  for tool in kcat jq; do command -v "$tool" >/dev/null || fail "$tool is not installed"; done
  [ -x bin/kbatch ] || fail "no bin/kbatch; run make build"
  [ -s "$K3_BOOTFILE" ] || fail "no 3-node cluster; run make kafka3-up"
  boot=$(cat "$K3_BOOTFILE")
  version=$(cat "$K3_VERFILE")
  libs=$KAFKA_CACHE_DIR/$version/libs
  [ -s "$K_LOG4J_TOOLS" ] || k_write_log4j
  topiccmd=$(k_topic_class "$libs")
  jtool() { k_tool "$libs" "$@" 8>&-; }
  node() { "$KBATCH_ROOT/scripts/kafka3-node.sh" "$@"; }
}

# k3_produce RATE TOPIC WORK: in the background, kcat (idempotent, acks=all) writes records
# k<i> TAB seq-<i> to TOPIC at ~RATE/s until WORK/stop exists; WORK/generated then holds how
# many were generated. Sets producer to the pipeline's pid; kcat's errors go to
# WORK/producer.err.
k3_produce() {
  local rate=$1 topic=$2 work=$3 boot
  boot=$(cat "$K3_BOOTFILE")
  (
    i=0
    step=$((rate / 20))
    [ "$step" -gt 0 ] || step=1
    while [ ! -e "$work/stop" ]; do
      for _ in $(seq 1 "$step"); do i=$((i + 1)); printf 'k%d\tseq-%d\n' "$i" "$i"; done
      sleep 0.05
    done
    echo "$i" >"$work/generated"
  ) | kcat -P -b "$boot" -t "$topic" -K $'\t' -X enable.idempotence=true -X acks=all \
    -X message.timeout.ms=300000 -X linger.ms=5 -X topic.metadata.refresh.interval.ms=1000 \
    2>"$work/producer.err" &
  producer=$!
}

# k3_rack N: node N's broker.rack (A, B, C).
k3_rack() { echo "ABC" | cut -c"$1"; }

k3_props() { echo "$K3_DIR/node$1/server.properties"; }
k3_log() { echo "$K3_DIR/node$1/broker.log"; }
k3_pidfile() { echo "$K3_DIR/node$1/pid"; }
k3_port() { sed -n 's/^listeners=PLAINTEXT:\/\/[^,]*:\([0-9]*\).*/\1/p' "$(k3_props "$1")"; }

# k3_alive N: node N's pid file names a live kafka.Kafka process.
k3_alive() { k_pid_alive "$(k3_pidfile "$1")" 'kafka\.Kafka'; }

# k3_start LIBS N: start node N (appends to its broker.log).
k3_start() {
  local libs=$1 n=$2 pidf
  pidf=$(k3_pidfile "$n")
  rm -f "$pidf"
  # shellcheck disable=SC2086,SC2016
  setsid sh -c 'echo $$ >"$0"; exec "$@"' "$pidf" \
    "$JAVA" -Xmx400m -Xms64m -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    ${KAFKA_JAVA_OPTS:-} -Dlog4j2.configurationFile="$K_LOG4J_BROKER" \
    -cp "$libs/*" kafka.Kafka "$(k3_props "$n")" \
    >>"$(k3_log "$n")" 2>&1 </dev/null 8>&- 9>&- &
  for _ in $(seq 1 50); do [ -s "$pidf" ] && return 0; sleep 0.1; done
  kdie "node $n did not start (no pid)"
}

# k3_stop N WAIT_SECONDS: SIGTERM (controlled shutdown), then SIGKILL; 0 = SIGKILL at once.
k3_stop() {
  local n=$1 wait=$2 pid
  k3_alive "$n" || { rm -f "$(k3_pidfile "$n")"; return 0; }
  pid=$(cat "$(k3_pidfile "$n")")
  k_kill "$pid" "$wait" "kafka: node $n" || kdie "node $n pid $pid survived SIGKILL"
  rm -f "$(k3_pidfile "$n")"
}

# k3_wait_node N LOG_OFFSET: node N logged its start after LOG_OFFSET and accepts connections.
k3_wait_node() {
  local n=$1 off=$2 port deadline
  port=$(k3_port "$n")
  deadline=$((SECONDS + KAFKA_WAIT_SECONDS))
  while :; do
    k3_alive "$n" || { tail -n 30 "$(k3_log "$n")" | cut -c1-300 >&2; kdie "node $n exited"; }
    if tail -c +"$((off + 1))" "$(k3_log "$n")" | grep -q 'Kafka Server started' && k_port_open "$port"; then
      return 0
    fi
    [ "$SECONDS" -lt "$deadline" ] || { tail -n 30 "$(k3_log "$n")" | cut -c1-300 >&2; kdie "node $n not started after ${KAFKA_WAIT_SECONDS}s"; }
    sleep 0.2
  done
}

# k3_wait_healthy LIBS: every partition has a leader and none is under-replicated.
k3_wait_healthy() {
  local libs=$1 deadline out topiccmd boot
  topiccmd=$(k_topic_class "$libs")
  boot=$(cat "$K3_BOOTFILE")
  deadline=$((SECONDS + KAFKA_WAIT_SECONDS))
  while :; do
    if out=$(timeout 60 "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -cp "$libs/*" \
        -Dlog4j2.configurationFile="$K_LOG4J_TOOLS" "$topiccmd" --bootstrap-server "$boot" \
        --describe --under-replicated-partitions 2>"$K3_DIR/probe.err" 8>&- 9>&-) && [ -z "$out" ] &&
      out=$(timeout 60 "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -cp "$libs/*" \
        -Dlog4j2.configurationFile="$K_LOG4J_TOOLS" "$topiccmd" --bootstrap-server "$boot" \
        --describe --unavailable-partitions 2>>"$K3_DIR/probe.err" 8>&- 9>&-) && [ -z "$out" ]; then
      rm -f "$K3_DIR/probe.err"
      return 0
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      { cat "$K3_DIR/probe.err"; printf '%s\n' "$out" | head -n 5; } >&2
      kdie "cluster not healthy after ${KAFKA_WAIT_SECONDS}s (partitions under-replicated or without leader)"
    fi
    sleep 1
  done
}
