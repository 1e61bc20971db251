# shellcheck shell=bash disable=SC2034
# A 3-node Apache Kafka cluster in KRaft mode on 127.0.0.1 (each node broker + controller, a
# static 3-voter quorum), for the fault suite. Source it after kafka-lib.sh; don't run it.
# Jars are those of kafka-up.sh (.cache/kafka/<version>/libs). State under .cache/kafka3/:
#   node<N>/server.properties, node<N>/data/, node<N>/broker.log, node<N>/pid
#   bootstrap (host:port,host:port,host:port), version
# Works for 3.3 and later (static controller.quorum.voters); 4.4.0 by default.

K3_DIR=${KAFKA3_DIR:-$KBATCH_ROOT/.cache/kafka3}
K3_BOOTFILE=$K3_DIR/bootstrap
K3_VERFILE=$K3_DIR/version
K3_NODES="1 2 3"

k3_init() {
  mkdir -p "$K3_DIR"
  [ -f "$K3_DIR/.gitignore" ] || echo '*' >"$K3_DIR/.gitignore"
  exec 8>"$K3_DIR/lock"
  flock -w 300 8 || kdie "another kafka3 script holds $K3_DIR/lock"
}

# k3_rack N: node N's broker.rack (A, B, C).
k3_rack() { echo "ABC" | cut -c"$1"; }

k3_props() { echo "$K3_DIR/node$1/server.properties"; }
k3_log() { echo "$K3_DIR/node$1/broker.log"; }
k3_pidfile() { echo "$K3_DIR/node$1/pid"; }
k3_port() { sed -n 's/^listeners=PLAINTEXT:\/\/[^,]*:\([0-9]*\).*/\1/p' "$(k3_props "$1")"; }

# k3_alive N: node N's pid file names a live kafka.Kafka process.
k3_alive() {
  local pid f
  f=$(k3_pidfile "$1")
  [ -s "$f" ] || return 1
  pid=$(cat "$f")
  [ -n "$pid" ] && k_running "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'
}

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
  if [ "$wait" -gt 0 ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 $((wait * 5))); do k_running "$pid" || break; sleep 0.2; done
  fi
  if k_running "$pid"; then
    [ "$wait" -gt 0 ] && klog "node $n (pid $pid) ignored SIGTERM for ${wait}s; SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do k_running "$pid" || break; sleep 0.1; done
  fi
  k_running "$pid" && kdie "node $n pid $pid survived SIGKILL"
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
