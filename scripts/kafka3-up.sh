#!/usr/bin/env bash
# Start (or reuse) a 3-node Apache Kafka cluster in KRaft mode on 127.0.0.1: every node is a
# broker and a controller of a static 3-voter quorum, replication factor 3 and min.insync 2
# for the internal topics, automatic leader rebalancing off (the fault suite elects
# preferred leaders itself). Node N sits in rack A, B, C (broker.rack) and leaders name a
# replica in a client's rack (replica.selector.class RackAwareReplicaSelector, KIP-392). stdout: one line, the bootstrap list (also in
# .cache/kafka3/bootstrap). Usage: [KAFKA_VERSION=4.4.0] scripts/kafka3-up.sh   (3.3 or later)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka3-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka3-lib.sh"
k_init
k3_init

all_alive() { for n in $K3_NODES; do k3_alive "$n" || return 1; done; }
if all_alive && [ -s "$K3_BOOTFILE" ]; then
  running=$(cat "$K3_VERFILE" 2>/dev/null || echo '?')
  [ "$running" = "$KAFKA_VERSION" ] ||
    klog "note: reusing running 3-node Kafka $running (requested $KAFKA_VERSION; run kafka3-down first)"
  klog "3-node cluster already running"
  cat "$K3_BOOTFILE"
  exit 0
fi
[ "$(k_mode "$KAFKA_VERSION")" != zk ] || kdie "the 3-node cluster runs in KRaft mode: Kafka 3.3 or later"
for n in $K3_NODES; do k3_stop "$n" 10; done
rm -f "$K3_BOOTFILE" "$K3_VERFILE"

t0=$SECONDS
libs=$(k_libs "$KAFKA_VERSION")
[ -s "$K_LOG4J_BROKER" ] || k_write_log4j
declare -A bport cport
used=""
for n in $K3_NODES; do
  for _ in 1 2 3 4 5; do p=$(k_pick_port); case " $used " in *" $p "*) ;; *) break ;; esac; done
  bport[$n]=$p; used="$used $p"
  for _ in 1 2 3 4 5; do p=$(k_pick_port); case " $used " in *" $p "*) ;; *) break ;; esac; done
  cport[$n]=$p; used="$used $p"
done
voters=""
boot=""
for n in $K3_NODES; do
  voters="${voters:+$voters,}$n@127.0.0.1:${cport[$n]}"
  boot="${boot:+$boot,}127.0.0.1:${bport[$n]}"
done
while :; do
  cid=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
  [ "${cid:0:1}" != - ] && break
done
for n in $K3_NODES; do
  rm -rf "$K3_DIR/node$n"
  mkdir -p "$K3_DIR/node$n"
  {
    cat <<PROPS
# written by scripts/kafka3-up.sh (Kafka $KAFKA_VERSION, node $n of 3)
process.roles=broker,controller
node.id=$n
listeners=PLAINTEXT://127.0.0.1:${bport[$n]},CONTROLLER://127.0.0.1:${cport[$n]}
advertised.listeners=PLAINTEXT://127.0.0.1:${bport[$n]}
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.voters=$voters
log.dirs=$K3_DIR/node$n/data
num.partitions=3
default.replication.factor=3
min.insync.replicas=2
offsets.topic.replication.factor=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
group.initial.rebalance.delay.ms=0
auto.leader.rebalance.enable=false
unclean.leader.election.enable=false
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=500
replica.lag.time.max.ms=10000
broker.rack=$(k3_rack "$n")
replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector
PROPS
    k_props_tail 3 2
  } >"$(k3_props "$n")"
  if ! k_tool "$libs" kafka.tools.StorageTool format -t "$cid" -c "$(k3_props "$n")" \
      >"$K3_DIR/node$n/format.log" 2>&1; then
    tail -n 20 "$K3_DIR/node$n/format.log" | cut -c1-400 >&2
    kdie "kafka-storage format of node $n failed"
  fi
  : >"$(k3_log "$n")"
done
echo "$boot" >"$K3_BOOTFILE"
for n in $K3_NODES; do k3_start "$libs" "$n"; done
for n in $K3_NODES; do k3_wait_node "$n" 0; done
k3_wait_healthy "$libs"
echo "$KAFKA_VERSION" >"$K3_VERFILE"
klog "3-node Kafka $KAFKA_VERSION up in $((SECONDS - t0))s: $boot"
echo "$boot"
