#!/usr/bin/env bash
# Write Avro, Protobuf and JSON Schema records with Confluent's own serializers (the Python
# confluent-kafka package) through the registry of `make registry-up` to the broker of
# `make kafka-up`, and dump them to .cache/registry/records.jsonl for the schema/ package's
# real-registry test. The virtualenv lives in .cache/pyenv (made on first use).
# Usage: scripts/schema-records.sh [TOPIC_PREFIX]    (prints the dump file's path)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=$root/.cache/pyenv
CONFLUENT_KAFKA_VERSION=${CONFLUENT_KAFKA_VERSION:-2.16.1}
boot=$(cat "$root/.cache/kafka/bootstrap" 2>/dev/null) || { echo "schema-records: no broker; run 'make kafka-up'" >&2; exit 1; }
reg=$(cat "$root/.cache/registry/url" 2>/dev/null) || { echo "schema-records: no registry; run 'make registry-up'" >&2; exit 1; }

# A virtualenv writes its own path into its scripts: one moved with .cache (a CI cache
# restored elsewhere) fails to start, so the marker names the path it was made at.
if [ "$(cat "$venv/.complete-$CONFLUENT_KAFKA_VERSION" 2>/dev/null)" != "$venv" ]; then
  echo "schema-records: installing confluent-kafka $CONFLUENT_KAFKA_VERSION into ${venv#"$root"/}" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "confluent-kafka[avro,protobuf,json,schemaregistry]==$CONFLUENT_KAFKA_VERSION" grpcio-tools >&2
  echo "$venv" >"$venv/.complete-$CONFLUENT_KAFKA_VERSION"
fi

gen=$root/.cache/registry/pygen
rm -rf "$gen"
mkdir -p "$gen"
"$venv/bin/python" -m grpc_tools.protoc -I "$root/schema/testdata/proto" --python_out="$gen" \
  shop/v1/common.proto shop/v1/order.proto
dump=$root/.cache/registry/records.jsonl
# A bound on the whole run as well: whatever hangs, the suite fails in minutes, not at CI's limit.
PYTHONPATH=$gen timeout --kill-after=10 300 "$venv/bin/python" "$root/scripts/schema-records.py" --bootstrap "$boot" \
  --registry "$reg" --testdata "$root/schema/testdata" --prefix "${1:-schemas}" --dump "$dump" ||
  { rc=$?; [ "$rc" -ne 124 ] || echo "schema-records: gave up after 300 s (registry $reg, broker $boot)" >&2; exit "$rc"; }
echo "$dump"
