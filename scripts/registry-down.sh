#!/usr/bin/env bash
# Stop the registry started by registry-up.sh (SIGTERM, up to 30s, then SIGKILL) and remove
# its pid and url files (its storage is in memory). registry.log and the app cache stay.
# Exits 0 if nothing runs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=registry-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/registry-lib.sh"
r_init
if r_alive; then
  pid=$(cat "$R_PIDFILE")
  r_stop 30
  rlog "stopped (pid $pid)"
fi
rm -f "$R_PIDFILE" "$R_URLFILE" "$R_VERFILE"
