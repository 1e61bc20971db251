#!/usr/bin/env bash
# Fault injection on one node of the kafka3-up.sh cluster, same ports and data:
#   kafka3-node.sh kill N       SIGKILL node N
#   kafka3-node.sh stop N       SIGTERM (controlled shutdown), SIGKILL after 30 s
#   kafka3-node.sh start N      start node N and wait until it serves again
#   kafka3-node.sh restart N [DOWN_SECONDS]   stop, stay down, start
#   kafka3-node.sh healthy      wait until no partition is under-replicated or leaderless
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka3-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka3-lib.sh"
cmd=${1:-}
n=${2:-}
case $cmd in
kill | stop | start | restart) case $n in 1 | 2 | 3) ;; *) kdie "usage: kafka3-node.sh $cmd 1|2|3" ;; esac ;;
healthy) ;;
*) kdie "usage: kafka3-node.sh kill|stop|start|restart|healthy [N] [DOWN_SECONDS]" ;;
esac
[ -s "$K3_BOOTFILE" ] && [ -s "$K3_VERFILE" ] || kdie "no 3-node cluster; run kafka3-up.sh"
libs=$KAFKA_CACHE_DIR/$(cat "$K3_VERFILE")/libs
[ -s "$K_LOG4J_BROKER" ] || k_write_log4j
start() {
  local off
  off=$(stat -c %s "$(k3_log "$n")" 2>/dev/null || echo 0)
  echo "----- kafka3-node.sh: start at $(date -u +%FT%TZ) -----" >>"$(k3_log "$n")"
  k3_start "$libs" "$n"
  k3_wait_node "$n" "$off"
}
case $cmd in
kill) k3_stop "$n" 0 ;;
stop) k3_stop "$n" 30 ;;
start) k3_alive "$n" || start ;;
restart)
  k3_stop "$n" 30
  sleep "${3:-0}"
  start
  ;;
healthy) k3_wait_healthy "$libs" ;;
esac
