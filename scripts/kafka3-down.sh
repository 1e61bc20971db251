#!/usr/bin/env bash
# Stop the 3-node cluster of kafka3-up.sh (SIGTERM, up to 30 s each, then SIGKILL) and remove
# its data. The broker logs stay until the next kafka3-up. Exits 0 if nothing runs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=kafka-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka-lib.sh"
# shellcheck source-path=SCRIPTDIR source=kafka3-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka3-lib.sh"
k3_init
for n in $K3_NODES; do
  if k3_alive "$n"; then
    k3_stop "$n" 30
    klog "node $n stopped"
  fi
  rm -rf "$K3_DIR/node$n/data"
done
rm -f "$K3_BOOTFILE" "$K3_VERFILE"
