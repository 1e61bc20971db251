#!/usr/bin/env bash
# Start (or reuse) Apicurio Registry on 127.0.0.1 (in-memory storage), no Docker: the
# Confluent-compatible API kbatch talks to is under /apis/ccompat/v7. The app comes from
# Maven Central once into .cache/registry/<version>/app and is reused after; it runs on Java 21+.
# Progress goes to stderr; stdout gets exactly one line: the registry URL for --registry
# (also written to .cache/registry/url).  Usage: [REGISTRY_VERSION=3.3.3] scripts/registry-up.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=registry-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/registry-lib.sh"
r_init

if r_alive && [ -s "$R_URLFILE" ] && r_ready "$(cat "$R_URLFILE")"; then
  k_reuse registry "Apicurio Registry" "$R_VERFILE" "$REGISTRY_VERSION" "$R_PIDFILE" registry-down "$(cat "$R_URLFILE")"
fi
r_stop 10
rm -f "$R_URLFILE"

t0=$SECONDS
java=$(r_java)
app=$(r_app "$REGISTRY_VERSION")
port=$(k_pick_port)
mport=$(k_pick_port "$port")
url="http://127.0.0.1:$port/apis/ccompat/v7"

: >"$R_LOG"
rm -f "$R_PIDFILE"
# shellcheck disable=SC2016
setsid sh -c 'echo $$ >"$0"; cd "$1" && shift && exec "$@"' "$R_PIDFILE" "$app" \
  "$java" -Xmx512m -Xms64m -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
  -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" \
  -Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port="$mport" \
  ${REGISTRY_JAVA_OPTS:-} -jar quarkus-run.jar \
  >>"$R_LOG" 2>&1 </dev/null 8>&- &
for _ in $(seq 1 50); do [ -s "$R_PIDFILE" ] && break; sleep 0.1; done
[ -s "$R_PIDFILE" ] || rdie "registry did not start (no pid)"

deadline=$((SECONDS + REGISTRY_WAIT_SECONDS))
until r_ready "$url"; do
  if ! r_alive || [ "$SECONDS" -ge "$deadline" ]; then
    echo "registry: error: not serving $url; last lines of ${R_LOG#"$KBATCH_ROOT"/}:" >&2
    tail -n 30 "$R_LOG" | cut -c1-400 >&2
    r_stop 0
    exit 1
  fi
  sleep 0.3
done
echo "$REGISTRY_VERSION" >"$R_VERFILE"
echo "$url" >"$R_URLFILE"
rlog "Apicurio Registry $REGISTRY_VERSION up in $((SECONDS - t0))s (pid $(cat "$R_PIDFILE"), management :$mport)"
echo "$url"
