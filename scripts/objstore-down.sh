#!/usr/bin/env bash
# Stop the object-store servers of scripts/objstore-up.sh (only those its pid files name).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=objstore-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/objstore-lib.sh"
o_init
for s in moto gcs azurite; do o_stop "$s" 10; done
rm -f "$O_ENV"
olog "stopped"
