# shellcheck shell=bash disable=SC2034
# Shared by auth-up.sh and auth-down.sh: the real-server authentication lab. Source it.
#
# Layout (git-ignored): .cache/auth/ (AUTH_DIR)
#   kafka/        the broker (kafka-lib.sh with KAFKA_CACHE_DIR here: jars, data, broker.log, pid)
#   pki/          CA, broker and client certificates made with openssl; a second CA ("rogue")
#   secrets/      SCRAM passwords, the OAuth client secret, key passphrase, Kerberos password (0600)
#   oidc/         authlab (the OIDC provider of internal/authlab): oidc-clients, oidc-url, pid, log
#   krb/          MIT KDC: kdc.conf, krb5.conf, database, keytabs, kdc.log, pid
#   env           what the tests read (KBATCH_AUTH_* lines), written last by auth-up.sh
AUTH_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AUTH_DIR=${AUTH_DIR:-$AUTH_ROOT/.cache/auth}
export KAFKA_CACHE_DIR=$AUTH_DIR/kafka
# A broker with six listeners starts slower than kafka-up's; a busy machine needs more still.
export KAFKA_WAIT_SECONDS=${KAFKA_WAIT_SECONDS:-300}
# shellcheck source-path=SCRIPTDIR source=kafka-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka-lib.sh"
AUTH_REALM=KBATCH.TEST

alog() { echo "auth: $*" >&2; }
adie() { echo "auth: error: $*" >&2; exit 1; }

# a_stop_pid FILE PATTERN: SIGTERM the process of FILE (if it is still that process), then SIGKILL.
a_stop_pid() {
  local pid
  if k_pid_alive "$1" "$2"; then
    pid=$(cat "$1")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do k_running "$pid" || break; sleep 0.1; done
    k_running "$pid" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$1"
}

# a_down: stop the broker, the OIDC provider and the KDC; remove their state (jars and logs stay).
a_down() {
  k_stop 20
  rm -rf "$K_DATA"
  rm -f "$K_BOOTFILE" "$K_VERFILE"
  a_stop_pid "$AUTH_DIR/oidc/pid" authlab
  a_stop_pid "$AUTH_DIR/krb/pid" krb5kdc
  rm -rf "$AUTH_DIR/krb/db" "$AUTH_DIR/env"
}
