#!/usr/bin/env bash
# Start (or reuse) a single-node Apache Kafka broker on 127.0.0.1, no Docker: KRaft for 3.3+,
# ZooKeeper mode (plus a ZooKeeper server from the same jars) for 2.x, e.g. 2.8.2, 3.6.2, 3.9.1, 4.x.
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
    k_reuse kafka Kafka "$K_VERFILE" "$KAFKA_VERSION" "$K_PIDFILE" kafka-down "$boot"
  fi
fi
# Leftovers of a previous run (dead, or alive but not serving): start from scratch.
k_stop 10
k_zk_stop
rm -f "$K_BOOTFILE"
mode=$(k_mode "$KAFKA_VERSION")

t0=$SECONDS
libs=$(k_libs "$KAFKA_VERSION")

rm -rf "$K_DATA"
port=$(k_pick_port)
cport=$(k_pick_port "$port")
k_write_log4j
if [ "$mode" = zk ]; then
  k_zk_start "$libs" "$cport"
fi
{
  echo "# written by scripts/kafka-up.sh (Kafka $KAFKA_VERSION, $mode)"
  case $mode in
  zk)
    cat <<PROPS
broker.id=1
zookeeper.connect=127.0.0.1:$cport
# A SIGKILLed broker's ephemeral registration must expire before it can come back
# (kafka-restart.sh): keep the session short (ZooKeeper's tickTime is 500 ms).
zookeeper.session.timeout.ms=3000
listeners=PLAINTEXT://127.0.0.1:$port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
PROPS
    ;;
  kraft-voters | kraft)
    cat <<PROPS
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
PROPS
    if [ "$mode" = kraft ]; then
      echo "controller.quorum.bootstrap.servers=127.0.0.1:$cport"
    else
      echo "controller.quorum.voters=1@127.0.0.1:$cport"
    fi
    cat <<PROPS
# After a SIGKILL (kafka-restart.sh) the new incarnation cannot register until the old
# broker session expires (default 9s): keep crash-restarts quick.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
PROPS
    ;;
  esac
  cat <<PROPS
log.dirs=$K_DATA
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
  k_props_tail 1 1
} >"$K_PROPS"

if [ "$mode" != zk ]; then
  # Kafka cluster ids are 16 random bytes, url-safe base64 without padding, not starting with '-'.
  while :; do
    cid=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    [ "${cid:0:1}" != - ] && break
  done
  standalone=()
  [ "$mode" = kraft ] && standalone=(--standalone)
  if ! k_tool "$libs" kafka.tools.StorageTool format "${standalone[@]}" -t "$cid" -c "$K_PROPS" \
      >"$KAFKA_CACHE_DIR/format.log" 2>&1; then
    { grep -m 5 -E 'Exception|Error|error' "$KAFKA_CACHE_DIR/format.log" ||
      tail -n 20 "$KAFKA_CACHE_DIR/format.log"; } | cut -c1-400 >&2
    k_zk_stop
    kdie "kafka-storage format failed"
  fi
fi

: >"$K_LOG"
k_start "$libs"
k_wait "$libs" 0
echo "$KAFKA_VERSION" >"$K_VERFILE"
echo "127.0.0.1:$port" >"$K_BOOTFILE"
if [ "$mode" = zk ]; then
  klog "$KAFKA_VERSION up in $((SECONDS - t0))s (pid $(cat "$K_PIDFILE"), ZooKeeper :$cport pid $(cat "$K_ZK_PIDFILE"))"
else
  klog "$KAFKA_VERSION up in $((SECONDS - t0))s (pid $(cat "$K_PIDFILE"), $mode controller :$cport)"
fi
echo "127.0.0.1:$port"
