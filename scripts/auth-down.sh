#!/usr/bin/env bash
# Stop what auth-up.sh started (broker, OIDC provider, KDC) and remove its state. Exits 0 if nothing runs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=auth-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/auth-lib.sh"
[ -d "$AUTH_DIR" ] || exit 0
k_init
a_down
alog "down"
