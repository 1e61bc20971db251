#!/usr/bin/env bash
# Stop the registry started by registry-up.sh (SIGTERM, up to 30s, then SIGKILL) and remove
# its pid and url files (its storage is in memory). registry.log and the app cache stay.
# Exits 0 if nothing runs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=registry-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/registry-lib.sh"
r_init
k_stop_running r_alive r_stop "$R_PIDFILE" rlog
rm -f "$R_PIDFILE" "$R_URLFILE" "$R_VERFILE"
