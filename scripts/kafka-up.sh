#!/usr/bin/env bash
# Start (or reuse) a single-node Apache Kafka broker in KRaft mode on 127.0.0.1, no Docker.
# Jars come from Maven Central once into .cache/kafka/<version>/libs and are reused after.
# Progress goes to stderr; stdout gets exactly one line: the bootstrap address host:port
# (also written to .cache/kafka/bootstrap).  Usage: [KAFKA_VERSION=4.4.0] scripts/kafka-up.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka-lib.sh"
k_init

if k_alive && [ -s "$K_BOOTFILE" ]; then
  boot=$(cat "$K_BOOTFILE")
  if k_port_open "${boot##*:}"; then
    running=$(cat "$K_VERFILE" 2>/dev/null || echo '?')
    [ "$running" = "$KAFKA_VERSION" ] ||
      klog "note: reusing running Kafka $running (requested $KAFKA_VERSION; run kafka-down first to switch)"
    klog "already running (pid $(cat "$K_PIDFILE"))"
    echo "$boot"
    exit 0
  fi
fi
# Leftovers of a previous run (dead, or alive but not serving): start from scratch.
k_stop 10
rm -f "$K_BOOTFILE"

t0=$SECONDS
libs=$(k_libs "$KAFKA_VERSION")

rm -rf "$K_DATA"
port=$(k_pick_port)
cport=$(k_pick_port "$port")
{
  cat <<PROPS
# written by scripts/kafka-up.sh
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.bootstrap.servers=127.0.0.1:$cport
log.dirs=$K_DATA
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# After a SIGKILL (kafka-restart.sh) the new incarnation cannot register until the old
# broker session expires (default 9s): keep crash-restarts quick.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
PROPS
  [ -z "${KAFKA_EXTRA_PROPS:-}" ] || printf '%s\n' "$KAFKA_EXTRA_PROPS"
} >"$K_PROPS"
k_write_log4j

# Kafka cluster ids are 16 random bytes, url-safe base64 without padding, not starting with '-'.
while :; do
  cid=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
  [ "${cid:0:1}" != - ] && break
done
if ! k_tool "$libs" kafka.tools.StorageTool format --standalone -t "$cid" -c "$K_PROPS" \
    >"$KAFKA_CACHE_DIR/format.log" 2>&1; then
  { grep -m 5 -E 'Exception|Error|error' "$KAFKA_CACHE_DIR/format.log" ||
    tail -n 20 "$KAFKA_CACHE_DIR/format.log"; } | cut -c1-400 >&2
  kdie "kafka-storage format failed"
fi

: >"$K_LOG"
k_start "$libs"
k_wait "$libs" 0
echo "$KAFKA_VERSION" >"$K_VERFILE"
echo "127.0.0.1:$port" >"$K_BOOTFILE"
klog "$KAFKA_VERSION up in $((SECONDS - t0))s (pid $(cat "$K_PIDFILE"), controller :$cport)"
echo "127.0.0.1:$port"
