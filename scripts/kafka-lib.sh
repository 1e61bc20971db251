# shellcheck shell=bash disable=SC2034
# Shared by kafka-up.sh, kafka-down.sh, kafka-restart.sh, kafka-tool.sh. Source it; don't run it.
#
# Layout (all git-ignored, under the repo root):
#   .cache/kafka/<version>/libs/   broker + CLI jars resolved from Maven Central (reused)
#   .cache/kafka/data/             log dir (KRaft metadata too; wiped by kafka-up and kafka-down)
#   .cache/kafka/zk/               ZooKeeper data, Kafka before 3.0 only (wiped likewise)
#   .cache/kafka/server.properties, log4j2-*.properties, broker.log, pid, bootstrap, version
#   .cache/kafka/zookeeper.properties, zookeeper.log, zk.pid   (ZooKeeper mode)
#
# Modes by version (k_mode): 2.x runs with ZooKeeper (the zookeeper jar that kafka_2.13
# depends on, org.apache.zookeeper, started as QuorumPeerMain); 3.3-3.8 KRaft with a static
# controller.quorum.voters; 3.9+ KRaft with controller.quorum.bootstrap.servers (--standalone).
#
# Environment knobs:
#   KAFKA_VERSION      Kafka release from Maven Central (default below)
#   KAFKA_CACHE_DIR    default <repo>/.cache/kafka
#   KAFKA_WAIT_SECONDS readiness bound (default 120)
#   KAFKA_JAVA_OPTS    extra JVM flags for the broker
#   KAFKA_EXTRA_PROPS  extra server.properties lines (newline separated), kafka-up only
#   JAVA, MVN          binaries (default: java, mvn)

KAFKA_DEFAULT_VERSION=4.4.0

KBATCH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KAFKA_VERSION=${KAFKA_VERSION:-$KAFKA_DEFAULT_VERSION}
KAFKA_CACHE_DIR=${KAFKA_CACHE_DIR:-$KBATCH_ROOT/.cache/kafka}
KAFKA_WAIT_SECONDS=${KAFKA_WAIT_SECONDS:-120}
JAVA=${JAVA:-java}
MVN=${MVN:-mvn}

K_DATA=$KAFKA_CACHE_DIR/data
K_PROPS=$KAFKA_CACHE_DIR/server.properties
K_LOG=$KAFKA_CACHE_DIR/broker.log
K_PIDFILE=$KAFKA_CACHE_DIR/pid
K_BOOTFILE=$KAFKA_CACHE_DIR/bootstrap
K_VERFILE=$KAFKA_CACHE_DIR/version
K_LOG4J_BROKER=$KAFKA_CACHE_DIR/log4j2-broker.properties
K_LOG4J_TOOLS=$KAFKA_CACHE_DIR/log4j2-tools.properties
K_ZK_DATA=$KAFKA_CACHE_DIR/zk
K_ZK_PROPS=$KAFKA_CACHE_DIR/zookeeper.properties
K_ZK_LOG=$KAFKA_CACHE_DIR/zookeeper.log
K_ZK_PIDFILE=$KAFKA_CACHE_DIR/zk.pid

klog() { echo "kafka: $*" >&2; }
kdie() { echo "kafka: error: $*" >&2; exit 1; }

# k_ver_ge A B: version A >= B (dotted numbers).
k_ver_ge() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$2" ]; }

# k_mode VERSION: zk | kraft-voters | kraft (see the header).
k_mode() {
  if ! k_ver_ge "$1" 3.3; then echo zk
  elif ! k_ver_ge "$1" 3.9; then echo kraft-voters
  else echo kraft
  fi
}

# k_class LIBS NAME...: the first class NAME (dotted) found in the Kafka jars of LIBS.
# CLI classes moved between releases (kafka.admin.TopicCommand -> org.apache.kafka.tools...).
k_class() {
  local libs=$1 c j listing
  shift
  listing=$libs/.classes
  if [ ! -s "$listing" ]; then
    for j in "$libs"/kafka_2.13-*.jar "$libs"/kafka-tools-*.jar; do
      [ -f "$j" ] || continue
      if command -v unzip >/dev/null; then unzip -Z1 "$j"; else jar tf "$j"; fi
    done 2>/dev/null | grep '\.class$' >"$listing.tmp.$$" || true
    mv "$listing.tmp.$$" "$listing"
  fi
  for c in "$@"; do
    if grep -qxF "${c//.//}.class" "$listing"; then echo "$c"; return 0; fi
  done
  kdie "none of $* in the jars of ${libs#"$KBATCH_ROOT"/}"
}

# k_topic_class LIBS: TopicCommand of that release.
k_topic_class() { k_class "$1" org.apache.kafka.tools.TopicCommand kafka.admin.TopicCommand; }

# k_hold_dir DIR FD WHAT: DIR made, with a git-ignore marker, and DIR/lock held on fd FD (8 or
# 9; never inherited by a server); WHAT names the scripts in the error when another one holds
# the lock for 300 s.
k_hold_dir() {
  mkdir -p "$1"
  [ -f "$1/.gitignore" ] || echo '*' >"$1/.gitignore"
  if [ "$2" = 8 ]; then exec 8>"$1/lock"; else exec 9>"$1/lock"; fi
  flock -w 300 "$2" || { echo "$3: error: another $3 script holds $1/lock" >&2; exit 1; }
}

# k_init: cache dir, git-ignore marker, lock (fd 9).
k_init() { k_hold_dir "$KAFKA_CACHE_DIR" 9 kafka; }

# k_libs VERSION: echoes the libs dir, resolving it with Maven on first use.
k_libs() {
  local v=$1 dir=$KAFKA_CACHE_DIR/$1/libs tmp
  if [ -f "$dir/.complete" ]; then echo "$dir"; return 0; fi
  command -v "$MVN" >/dev/null || kdie "mvn not found (needed once to resolve Kafka $v)"
  klog "resolving Kafka $v from Maven Central into ${dir#"$KBATCH_ROOT"/}"
  tmp=$KAFKA_CACHE_DIR/$v/libs.tmp.$$
  rm -rf "$tmp"
  mkdir -p "$tmp"
  k_mvn "$tmp" "kafka: error: maven could not resolve org.apache.kafka:kafka_2.13:$v" \
    -f "$KBATCH_ROOT/scripts/kafka/pom.xml" -Dkafka.version="$v" \
    dependency:copy-dependencies -DoutputDirectory="$tmp"
  ls "$tmp"/kafka_2.13-"$v".jar >/dev/null 2>&1 || kdie "kafka_2.13-$v.jar missing after resolution"
  k_cache_done "$tmp" "$dir"
}

# k_stop_running ALIVE STOP PIDFILE SAY: when ALIVE says the server of PIDFILE runs, STOP 30
# stops it (SIGTERM, up to 30 s, then SIGKILL) and SAY says which pid stopped.
k_stop_running() {
  local pid
  "$1" || return 0
  pid=$(cat "$3")
  "$2" 30
  "$4" "stopped (pid $pid)"
}

# k_reuse PREFIX NAME VERFILE WANTED PIDFILE DOWN ADDRESS: the running NAME is reused: says so
# on stderr (noting a version other than WANTED, and the DOWN script that would switch), prints
# ADDRESS and exits 0.
k_reuse() {
  local running
  running=$(cat "$3" 2>/dev/null || echo '?')
  [ "$running" = "$4" ] ||
    echo "$1: note: reusing running $2 $running (requested $4; run $6 first to switch)" >&2
  echo "$1: already running (pid $(cat "$5"))" >&2
  echo "$7"
  exit 0
}

# k_props_tail RF MIN_ISR: the last broker properties: the share coordinator's state topic
# (Kafka 4.0 and later) with replication factor RF and min.insync.replicas MIN_ISR, then
# KAFKA_EXTRA_PROPS.
k_props_tail() {
  if k_ver_ge "$KAFKA_VERSION" 4.0; then
    printf 'share.coordinator.state.topic.replication.factor=%s\nshare.coordinator.state.topic.min.isr=%s\n' "$1" "$2"
  fi
  [ -z "${KAFKA_EXTRA_PROPS:-}" ] || printf '%s\n' "$KAFKA_EXTRA_PROPS"
}

# k_cache_done TMP DIR: TMP, filled, marked complete and moved to DIR; echoes DIR.
k_cache_done() {
  touch "$1/.complete"
  rm -rf "$2"
  mv "$1" "$2"
  echo "$2"
}

# k_mvn TMP ERROR ARGS...: Maven (batch, quiet) run with ARGS, its output in TMP.mvn.log; when
# it fails: the log's last lines, TMP removed, ERROR on stderr, and exit 1.
k_mvn() {
  local tmp=$1 err=$2
  shift 2
  if ! "$MVN" -B -q "$@" >"$tmp.mvn.log" 2>&1; then
    tail -n 30 "$tmp.mvn.log" >&2
    rm -rf "$tmp" "$tmp.mvn.log"
    echo "$err" >&2
    exit 1
  fi
  rm -f "$tmp.mvn.log"
}

k_write_log4j() {
  cat >"$K_LOG4J_BROKER" <<'EOF'
status = warn
# Kafka logs its own shutdown from a JVM hook; log4j's hook would stop logging before that
shutdownHook = disable
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
# the full config dump is ~2000 lines per start; server.properties is next to this file
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
  cat >"$K_LOG4J_TOOLS" <<'EOF'
status = error
shutdownHook = disable
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = ERR
EOF
}

# k_tool LIBS CLASS ARGS...: run a Kafka CLI class quietly (logs WARN+ to stderr).
k_tool() {
  local libs=$1; shift
  "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -cp "$libs/*" \
    -Dlog4j2.configurationFile="$K_LOG4J_TOOLS" "$@" 9>&-
}

# k_running PID: alive and not a zombie.
k_running() {
  kill -0 "$1" 2>/dev/null || return 1
  [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# k_pid_alive FILE PATTERN: the pid in FILE runs a command line holding PATTERN.
k_pid_alive() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(cat "$1")
  [ -n "$pid" ] && k_running "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2"
}

# k_kill PID WAIT_SECONDS WHAT: SIGTERM, up to WAIT_SECONDS for PID to end, then SIGKILL
# (WAIT_SECONDS 0: SIGKILL at once; WHAT names it when it ignored SIGTERM). Fails when PID
# survived SIGKILL.
k_kill() {
  local pid=$1 wait=$2 what=$3
  if [ "$wait" -gt 0 ]; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 $((wait * 5))); do k_running "$pid" || break; sleep 0.2; done
  fi
  if k_running "$pid"; then
    [ "$wait" -gt 0 ] && echo "$what pid $pid ignored SIGTERM for ${wait}s; SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do k_running "$pid" || break; sleep 0.1; done
  fi
  ! k_running "$pid"
}

# k_alive: the pid file names a live kafka.Kafka process.
k_alive() { k_pid_alive "$K_PIDFILE" 'kafka\.Kafka'; }

# k_port_open PORT
k_port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# k_port_free PORT: nothing on this host uses it (any state, v4 or v6).
k_port_free() {
  local hex
  hex=$(printf '%04X' "$1")
  ! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '{print $2}' | grep -q ":$hex\$"
}

# k_pick_port [EXCLUDE]: a free port below the ephemeral range (32768+), so an outgoing
# connection can't grab it between picking and binding.
k_pick_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 12000))
    [ "$p" = "${1:-}" ] && continue
    if k_port_free "$p"; then echo "$p"; return 0; fi
  done
  kdie "no free port found in 20000-31999"
}

# k_prop KEY: value from server.properties
k_prop() { sed -n "s/^$1=//p" "$K_PROPS" | tail -n 1; }

# k_start LIBS: start kafka.Kafka in its own session; appends to broker.log; writes pid.
k_start() {
  local libs=$1
  rm -f "$K_PIDFILE"
  # shellcheck disable=SC2086,SC2016
  setsid sh -c 'echo $$ >"$0"; exec "$@"' "$K_PIDFILE" \
    "$JAVA" -Xmx512m -Xms64m -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    ${KAFKA_JAVA_OPTS:-} \
    -Dlog4j2.configurationFile="$K_LOG4J_BROKER" \
    -cp "$libs/*" kafka.Kafka "$K_PROPS" \
    >>"$K_LOG" 2>&1 </dev/null 9>&- &
  for _ in $(seq 1 50); do [ -s "$K_PIDFILE" ] && return 0; sleep 0.1; done
  kdie "broker did not start (no pid)"
}

# k_fail MSG: print the log tail, kill a half-started broker, exit 1.
k_fail() {
  echo "kafka: error: $1; last lines of ${K_LOG#"$KBATCH_ROOT"/}:" >&2
  tail -n 40 "$K_LOG" | cut -c1-400 >&2
  k_stop 0
  rm -f "$K_BOOTFILE"
  exit 1
}

# k_wait LIBS LOG_OFFSET: until the broker started (log line after LOG_OFFSET bytes), its
# port accepts connections and it answers a metadata request with no leaderless partition.
k_wait() {
  local libs=$1 off=$2 port deadline
  port=$(k_prop listeners | sed -n 's/.*PLAINTEXT:\/\/[^,]*:\([0-9]*\).*/\1/p')
  deadline=$((SECONDS + KAFKA_WAIT_SECONDS))
  while :; do
    k_alive || k_fail "broker process exited"
    # KRaft: "Kafka Server started"; ZooKeeper mode (2.x): "[KafkaServer id=1] started"
    if tail -c +"$((off + 1))" "$K_LOG" | grep -qE 'Kafka Server started|\] started \(kafka\.server\.KafkaServer\)' &&
      k_port_open "$port"; then
      break
    fi
    [ "$SECONDS" -lt "$deadline" ] || k_fail "broker not started after ${KAFKA_WAIT_SECONDS}s"
    sleep 0.2
  done
  # Metadata served and every partition has a leader (matters after a crash-restart).
  local left out topiccmd
  topiccmd=$(k_topic_class "$libs")
  while :; do
    left=$((deadline - SECONDS))
    [ "$left" -gt 5 ] || left=5
    if out=$(timeout "$left" "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -cp "$libs/*" \
        -Dlog4j2.configurationFile="$K_LOG4J_TOOLS" \
        "$topiccmd" --bootstrap-server "127.0.0.1:$port" \
        --describe --unavailable-partitions 2>"$KAFKA_CACHE_DIR/probe.err" 9>&-) && [ -z "$out" ]; then
      break
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      { cat "$KAFKA_CACHE_DIR/probe.err"; printf '%s\n' "$out" | head -n 5; } >&2
      k_fail "broker on 127.0.0.1:$port does not serve metadata / has partitions without leader"
    fi
    k_alive || k_fail "broker process exited"
    sleep 0.5
  done
  rm -f "$KAFKA_CACHE_DIR/probe.err"
}

# k_stop SIGNAL_WAIT_SECONDS: SIGTERM, wait, then SIGKILL. 0 seconds = SIGKILL at once.
k_stop() {
  local wait=$1 pid
  k_alive || { rm -f "$K_PIDFILE"; return 0; }
  pid=$(cat "$K_PIDFILE")
  k_kill "$pid" "$wait" "kafka: broker" || kdie "broker pid $pid survived SIGKILL"
  rm -f "$K_PIDFILE"
}

# ---- ZooKeeper (Kafka 2.x) ----

# k_zk_alive: the zk pid file names a live ZooKeeper server.
k_zk_alive() { k_pid_alive "$K_ZK_PIDFILE" QuorumPeerMain; }

# k_zk_start LIBS PORT: a standalone ZooKeeper on 127.0.0.1:PORT with fresh data; waits until
# it answers. A short tickTime lets a SIGKILLed broker's session (and its /brokers/ids node)
# expire within seconds, so kafka-restart.sh can register the same broker id again.
k_zk_start() {
  local libs=$1 port=$2 deadline
  rm -rf "$K_ZK_DATA"
  mkdir -p "$K_ZK_DATA"
  cat >"$K_ZK_PROPS" <<PROPS
# written by scripts/kafka-lib.sh
dataDir=$K_ZK_DATA
clientPortAddress=127.0.0.1
clientPort=$port
tickTime=500
minSessionTimeout=1000
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr
PROPS
  : >"$K_ZK_LOG"
  rm -f "$K_ZK_PIDFILE"
  # shellcheck disable=SC2016
  setsid sh -c 'echo $$ >"$0"; exec "$@"' "$K_ZK_PIDFILE" \
    "$JAVA" -Xmx128m -Xms32m -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$K_LOG4J_BROKER" -Dzookeeper.jmx.log4j.disable=true \
    -cp "$libs/*" org.apache.zookeeper.server.quorum.QuorumPeerMain "$K_ZK_PROPS" \
    >>"$K_ZK_LOG" 2>&1 </dev/null 9>&- &
  deadline=$((SECONDS + 60))
  while :; do
    if k_zk_alive && [ "$(exec 3<>"/dev/tcp/127.0.0.1/$port" && printf ruok >&3 && timeout 2 cat <&3)" = imok ]; then
      return 0
    fi 2>/dev/null
    if [ "$SECONDS" -ge "$deadline" ] || { [ -s "$K_ZK_PIDFILE" ] && ! k_zk_alive; }; then
      tail -n 20 "$K_ZK_LOG" | cut -c1-400 >&2
      kdie "zookeeper did not start on 127.0.0.1:$port"
    fi
    sleep 0.2
  done
}

# k_zk_stop: SIGTERM (ZooKeeper stops at once), then SIGKILL; removes its data.
k_zk_stop() {
  local pid
  if k_zk_alive; then
    pid=$(cat "$K_ZK_PIDFILE")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do k_running "$pid" || break; sleep 0.2; done
    k_running "$pid" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$K_ZK_PIDFILE"
  rm -rf "$K_ZK_DATA"
}
