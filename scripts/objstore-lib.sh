# shellcheck shell=bash disable=SC2034
# Shared by objstore-up.sh and objstore-down.sh. Source it; don't run it.
# Port and process helpers come from kafka-lib.sh.
#
# Three object-store protocol servers on 127.0.0.1, no Docker, each on a free port:
#   S3         moto server (PyPI moto[server]) in a virtualenv, .cache/objstore/motoenv
#   GCS        fake-gcs-server (Go), built once with go install into .cache/bin
#   Azure Blob Azurite (npm), installed once into .cache/azurite
# Layout (all git-ignored, under the repo root):
#   .cache/objstore/<name>.pid, <name>.log   one per server (moto, gcs, azurite)
#   .cache/objstore/env                      the environment each SDK's default chain reads
#                                            (shell: `set -a; . .cache/objstore/env`)
#
# Environment knobs:
#   MOTO_VERSION           moto release on PyPI (default below)
#   FAKE_GCS_VERSION       github.com/fsouza/fake-gcs-server version (default below)
#   AZURITE_VERSION        azurite release on npm (default below)
#   OBJSTORE_WAIT_SECONDS  readiness bound per server (default 120)
#   FAKE_GCS_LOG_LEVEL     fake-gcs-server log level (default warn; info logs every request)

# shellcheck source-path=SCRIPTDIR source=kafka-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka-lib.sh"

MOTO_VERSION=${MOTO_VERSION:-5.2.5}
FAKE_GCS_VERSION=${FAKE_GCS_VERSION:-v1.56.1}
AZURITE_VERSION=${AZURITE_VERSION:-3.37.0}
OBJSTORE_WAIT_SECONDS=${OBJSTORE_WAIT_SECONDS:-120}
O_DIR=$KBATCH_ROOT/.cache/objstore
O_ENV=$O_DIR/env
O_MOTOENV=$O_DIR/motoenv
O_GCS_BIN=$KBATCH_ROOT/.cache/bin/fake-gcs-server
O_AZURITE_DIR=$KBATCH_ROOT/.cache/azurite
# Azurite's well-known development account and key (published in Azurite's README; it opens
# nothing but a local emulator).
O_AZURITE_ACCOUNT=devstoreaccount1
O_AZURITE_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='

olog() { echo "objstore: $*" >&2; }
odie() { echo "objstore: error: $*" >&2; exit 1; }

# o_init: the folder and the lock (fd 8; never inherited by a server).
o_init() {
  mkdir -p "$O_DIR"
  exec 8>"$O_DIR/lock"
  flock -w 300 8 || odie "another objstore script holds $O_DIR/lock"
}

# o_alive NAME: NAME.pid names a live process.
o_alive() {
  local pid
  [ -s "$O_DIR/$1.pid" ] || return 1
  pid=$(cat "$O_DIR/$1.pid")
  [ -n "$pid" ] && k_running "$pid"
}

# o_start NAME CMD...: runs CMD in a session of its own, its pid in NAME.pid, output in NAME.log.
o_start() {
  local name=$1 pidfile=$O_DIR/$1.pid
  shift
  rm -f "$pidfile"
  : >"$O_DIR/$name.log"
  # shellcheck disable=SC2016
  setsid sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" >>"$O_DIR/$name.log" 2>&1 </dev/null 8>&- &
  for _ in $(seq 1 50); do [ -s "$pidfile" ] && break; sleep 0.1; done
  [ -s "$pidfile" ] || odie "$name did not start (no pid)"
}

# o_wait NAME URL: until URL answers HTTP at all (any status), or NAME died or the bound passed.
o_wait() {
  local name=$1 url=$2 deadline=$((SECONDS + OBJSTORE_WAIT_SECONDS))
  until curl -s -o /dev/null --max-time 5 "$url"; do
    if ! o_alive "$name" || [ "$SECONDS" -ge "$deadline" ]; then
      echo "objstore: error: $name is not serving $url; last lines of ${O_DIR#"$KBATCH_ROOT"/}/$name.log:" >&2
      tail -n 20 "$O_DIR/$name.log" | cut -c1-300 >&2
      o_stop "$name" 5
      exit 1
    fi
    sleep 0.3
  done
}

# o_stop NAME WAIT_SECONDS: SIGTERM to the server's session, wait, then SIGKILL.
o_stop() {
  local name=$1 wait=$2 pid
  o_alive "$name" || { rm -f "$O_DIR/$name.pid"; return 0; }
  pid=$(cat "$O_DIR/$name.pid")
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 $((wait * 5))); do k_running "$pid" || break; sleep 0.2; done
  if k_running "$pid"; then
    olog "$name pid $pid ignored SIGTERM for ${wait}s; SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do k_running "$pid" || break; sleep 0.1; done
  fi
  rm -f "$O_DIR/$name.pid"
}

# o_install: moto, fake-gcs-server and Azurite, each once.
o_install() {
  # A virtualenv writes its own path into its scripts: one moved with .cache (a CI cache
  # restored elsewhere) fails to start, so the marker names the path it was made at.
  if [ "$(cat "$O_MOTOENV/.complete-$MOTO_VERSION" 2>/dev/null)" != "$O_MOTOENV" ]; then
    olog "installing moto[server]==$MOTO_VERSION into ${O_MOTOENV#"$KBATCH_ROOT"/}"
    rm -rf "$O_MOTOENV"
    python3 -m venv "$O_MOTOENV" || odie "python3 -m venv failed"
    "$O_MOTOENV/bin/pip" install -q "moto[server]==$MOTO_VERSION" >&2 || odie "pip install moto[server]==$MOTO_VERSION failed"
    echo "$O_MOTOENV" >"$O_MOTOENV/.complete-$MOTO_VERSION"
  fi
  if ! { [ -x "$O_GCS_BIN" ] && go version -m "$O_GCS_BIN" 2>/dev/null | grep -q "fake-gcs-server[[:space:]]*$FAKE_GCS_VERSION"; }; then
    olog "building fake-gcs-server $FAKE_GCS_VERSION into ${O_GCS_BIN#"$KBATCH_ROOT"/}"
    GOBIN=$(dirname "$O_GCS_BIN") go install "github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION" >&2 ||
      odie "go install github.com/fsouza/fake-gcs-server@$FAKE_GCS_VERSION failed"
  fi
  if [ "$(cat "$O_AZURITE_DIR/.complete" 2>/dev/null)" != "$AZURITE_VERSION" ]; then
    olog "installing azurite@$AZURITE_VERSION into ${O_AZURITE_DIR#"$KBATCH_ROOT"/}"
    command -v npm >/dev/null || odie "npm not found (Azurite is an npm package)"
    mkdir -p "$O_AZURITE_DIR"
    npm install --no-audit --no-fund --loglevel=error --prefix "$O_AZURITE_DIR" "azurite@$AZURITE_VERSION" >&2 ||
      odie "npm install azurite@$AZURITE_VERSION failed"
    echo "$AZURITE_VERSION" >"$O_AZURITE_DIR/.complete"
  fi
}
