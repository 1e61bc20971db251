#!/usr/bin/env bash
# The real-server authentication suite: start the lab (scripts/auth-up.sh: Kafka with a listener
# per mechanism, an MIT KDC, an OIDC provider, all under .cache/auth), run the TestRealAuth* tests
# of cli/ against it with the kbatch binary, and stop the lab again (AUTH_KEEP=1 leaves it up).
#   full   every test, with the two 30 s watches that prove tokens are renewed before they expire
#   smoke  the same without the two 30 s watches
# Each suite must have run and passed (a renamed or skipped test fails here); the Kerberos suite
# is required when the KDC is installed (krb5-kdc, krb5-admin-server, krb5-user).
# Usage: scripts/auth-test.sh full|smoke
set -euo pipefail
mode=${1:-full}
case $mode in full | smoke) ;; *) echo "usage: $0 full|smoke" >&2; exit 2 ;; esac
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
t0=$SECONDS
[ "${AUTH_KEEP:-0}" = 1 ] || trap 'scripts/auth-down.sh' EXIT
envfile=$(scripts/auth-up.sh)
skip=()
[ "$mode" = smoke ] && skip=(-skip '/before_expiry$')
log=$(mktemp)
rc=0
KBATCH_TEST_AUTH_ENV=$envfile go test -race -count=1 -run '^TestRealAuth' "${skip[@]}" -v ./cli/ >"$log" 2>&1 || rc=$?
grep -E '^(--- |    --- |ok|FAIL|PASS)' "$log" || true
want=(TestRealAuthSCRAM TestRealAuthMTLS TestRealAuthOAuthBearerStaticToken TestRealAuthOAuthBearerOIDC)
grep -q '^KBATCH_AUTH_KRB=' "$envfile" && want+=(TestRealAuthKerberos)
for t in "${want[@]}"; do
  grep -q "^--- PASS: $t " "$log" || { echo "auth-test: $t did not run and pass" >&2; rc=1; }
done
if [ "$rc" != 0 ]; then
  echo "auth-test: failed; full output:" >&2
  cat "$log" >&2
fi
rm -f "$log"
echo "auth-test: $mode ${want[*]} in $((SECONDS - t0))s (rc $rc)" >&2
exit "$rc"
