#!/usr/bin/env bash
# Start three object-store protocol servers on free ports of 127.0.0.1 (scripts/objstore-lib.sh
# says what and where; each is installed under .cache/ on first use): moto (S3), fake-gcs-server
# (GCS) and Azurite (Azure Blob), all in memory. Writes .cache/objstore/env, the variables each
# cloud SDK's default chain reads to reach them, and prints it on stdout. Servers already up
# are restarted (they hold nothing worth keeping). Stop them with scripts/objstore-down.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=objstore-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/objstore-lib.sh"
o_init
for s in moto gcs azurite; do o_stop "$s" 10; done
rm -f "$O_ENV"
t0=$SECONDS
o_install
# A server that does not come up takes the others down with it.
trap 'for s in moto gcs azurite; do o_stop "$s" 5; done' ERR EXIT

# Three distinct free ports, picked before any server starts binding.
s3port=$(k_pick_port)
gcsport=$(k_pick_port "$s3port")
azport=$(k_pick_port "$gcsport")
while [ "$azport" = "$s3port" ]; do azport=$(k_pick_port "$gcsport"); done
o_start moto "$O_MOTOENV/bin/moto_server" -H 127.0.0.1 -p "$s3port"
o_start gcs "$O_GCS_BIN" -scheme http -host 127.0.0.1 -port "$gcsport" -backend memory -log-level "${FAKE_GCS_LOG_LEVEL:-warn}" \
  -external-url "http://127.0.0.1:$gcsport" -public-host "127.0.0.1:$gcsport"
o_start azurite node "$O_AZURITE_DIR/node_modules/azurite/dist/src/blob/main.js" --blobHost 127.0.0.1 \
  --blobPort "$azport" --inMemoryPersistence --disableTelemetry --skipApiVersionCheck --silent

o_wait moto "http://127.0.0.1:$s3port/moto-api/"
o_wait gcs "http://127.0.0.1:$gcsport/storage/v1/b"
o_wait azurite "http://127.0.0.1:$azport/$O_AZURITE_ACCOUNT?comp=list"

cat >"$O_ENV.tmp" <<ENV
# S3: moto server at 127.0.0.1:$s3port (any key pair is accepted)
AWS_ENDPOINT_URL_S3=http://127.0.0.1:$s3port
AWS_ACCESS_KEY_ID=kbatch-test
AWS_SECRET_ACCESS_KEY=kbatch-test
AWS_REGION=us-east-1
AWS_EC2_METADATA_DISABLED=true
# GCS: fake-gcs-server at 127.0.0.1:$gcsport (the storage client sends no credentials then)
STORAGE_EMULATOR_HOST=127.0.0.1:$gcsport
# Azure Blob: Azurite at 127.0.0.1:$azport, its development account and key
AZURE_STORAGE_ACCOUNT=$O_AZURITE_ACCOUNT
AZURE_STORAGE_KEY=$O_AZURITE_KEY
AZURE_STORAGE_DOMAIN=127.0.0.1:$azport
AZURE_STORAGE_PROTOCOL=http
AZURE_STORAGE_IS_LOCAL_EMULATOR=true
ENV
mv "$O_ENV.tmp" "$O_ENV"
trap - ERR EXIT
olog "moto :$s3port, fake-gcs-server :$gcsport, Azurite :$azport up in $((SECONDS - t0))s (env: ${O_ENV#"$KBATCH_ROOT"/})"
cat "$O_ENV"
