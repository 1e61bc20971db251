# shellcheck shell=bash disable=SC2034
# Shared by registry-up.sh and registry-down.sh. Source it; don't run it.
# Port and process helpers come from kafka-lib.sh.
#
# Layout (all git-ignored, under the repo root):
#   .cache/registry/<version>/app/   Apicurio Registry from Maven Central (reused)
#   .cache/registry/registry.log, pid, url, version
#
# Environment knobs:
#   REGISTRY_VERSION       Apicurio Registry release (default below)
#   REGISTRY_CACHE_DIR     default <repo>/.cache/registry
#   REGISTRY_WAIT_SECONDS  readiness bound (default 120)
#   REGISTRY_JAVA          a Java 21+ binary (default: java if it is 21+, else
#                          /usr/lib/jvm/temurin-25-jdk-amd64/bin/java)
#   MVN                    default mvn

# shellcheck source-path=SCRIPTDIR source=kafka-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/kafka-lib.sh"

REGISTRY_DEFAULT_VERSION=3.3.3
REGISTRY_VERSION=${REGISTRY_VERSION:-$REGISTRY_DEFAULT_VERSION}
REGISTRY_CACHE_DIR=${REGISTRY_CACHE_DIR:-$KBATCH_ROOT/.cache/registry}
REGISTRY_WAIT_SECONDS=${REGISTRY_WAIT_SECONDS:-120}

R_LOG=$REGISTRY_CACHE_DIR/registry.log
R_PIDFILE=$REGISTRY_CACHE_DIR/pid
R_URLFILE=$REGISTRY_CACHE_DIR/url
R_VERFILE=$REGISTRY_CACHE_DIR/version

rlog() { echo "registry: $*" >&2; }
rdie() { echo "registry: error: $*" >&2; exit 1; }

# r_init: cache dir, git-ignore marker, lock (fd 8).
r_init() { k_hold_dir "$REGISTRY_CACHE_DIR" 8 registry; }

# r_java: echoes a Java 21+ binary.
r_java() {
  local j v
  for j in ${REGISTRY_JAVA:-} java /usr/lib/jvm/temurin-25-jdk-amd64/bin/java; do
    command -v "$j" >/dev/null 2>&1 || continue
    v=$("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p')
    if [ -n "$v" ] && [ "${v%%.*}" -ge 21 ]; then echo "$j"; return 0; fi
  done
  rdie "Apicurio Registry needs Java 21+; set REGISTRY_JAVA"
}

# r_app VERSION: echoes the unpacked app dir (holding quarkus-run.jar),
# fetching io.apicurio:apicurio-registry-app:VERSION:tar.gz:all with Maven on first use.
r_app() {
  local v=$1 dir=$REGISTRY_CACHE_DIR/$1/app tmp
  if [ -f "$dir/.complete" ]; then echo "$dir"; return 0; fi
  command -v "$MVN" >/dev/null || rdie "mvn not found (needed once to fetch Apicurio Registry $v)"
  rlog "fetching Apicurio Registry $v from Maven Central into ${dir#"$KBATCH_ROOT"/}"
  tmp=$REGISTRY_CACHE_DIR/$v/app.tmp.$$
  rm -rf "$tmp"
  mkdir -p "$tmp/dl"
  k_mvn "$tmp" "registry: error: maven could not fetch io.apicurio:apicurio-registry-app:$v:tar.gz:all" \
    dependency:copy -Dartifact="io.apicurio:apicurio-registry-app:$v:tar.gz:all" -DoutputDirectory="$tmp/dl"
  tar -xzf "$tmp"/dl/*.tar.gz -C "$tmp" || rdie "could not unpack the Apicurio Registry archive"
  rm -rf "$tmp/dl"
  [ -f "$tmp/quarkus-run.jar" ] || rdie "quarkus-run.jar missing after unpacking"
  k_cache_done "$tmp" "$dir"
}

# r_alive: the pid file names a live quarkus-run.jar process.
r_alive() { k_pid_alive "$R_PIDFILE" 'quarkus-run\.jar'; }

# r_ready URL: the Confluent API answers.
r_ready() { curl -fs -o /dev/null --max-time 5 "$1/subjects"; }

# r_stop WAIT_SECONDS: SIGTERM, wait, then SIGKILL.
r_stop() {
  local wait=$1 pid
  r_alive || { rm -f "$R_PIDFILE"; return 0; }
  pid=$(cat "$R_PIDFILE")
  k_kill "$pid" "$wait" "registry: registry" || rdie "registry pid $pid survived SIGKILL"
  rm -f "$R_PIDFILE"
}
