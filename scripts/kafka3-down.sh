#!/usr/bin/env bash
# Stop the 3-node cluster of kafka3-up.sh (SIGTERM to all, up to 15 s, then SIGKILL) and remove
# its data. The broker logs stay until the next kafka3-up. Exits 0 if nothing runs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka3-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka3-lib.sh"
k3_init
# All at once: a node stopped last cannot finish a controlled shutdown without its quorum.
for n in $K3_NODES; do
  if k3_alive "$n"; then
    (k3_stop "$n" 15 && klog "node $n stopped") &
  fi
done
wait
for n in $K3_NODES; do rm -rf "$K3_DIR/node$n/data"; done
rm -f "$K3_BOOTFILE" "$K3_VERFILE"
