#!/usr/bin/env bash
# Stop the broker started by kafka-up.sh (SIGTERM, up to 30s, then SIGKILL) and remove its
# data dir, pid and bootstrap files (and its ZooKeeper, for 2.x). broker.log and the jar cache stay. Exits 0 if nothing runs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka-lib.sh"
k_init
k_stop_running k_alive k_stop "$K_PIDFILE" klog
k_zk_stop
rm -rf "$K_DATA"
rm -f "$K_PIDFILE" "$K_BOOTFILE" "$K_VERFILE"
