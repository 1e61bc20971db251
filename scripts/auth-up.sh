#!/usr/bin/env bash
# The real-server authentication lab, no Docker, everything under .cache/auth (see auth-lib.sh):
#   - a PKI made with openssl (CA, broker cert for 127.0.0.1/localhost, client cert and keys:
#     plain, PKCS#8 encrypted, legacy PEM encrypted; a rogue CA with its own client cert);
#   - internal/authlab, an OIDC provider (token endpoint + JWKS, real RSA keys and JWTs);
#   - an MIT KDC from Debian's krb5-kdc (realm KBATCH.TEST; principals kafka/localhost and
#     kbatch), unless AUTH_KERBEROS=0 or krb5kdc is not installed;
#   - one Apache Kafka broker (KAFKA_VERSION, default of kafka-lib.sh, 4.x) with a listener per
#     mechanism: PLAINTEXT (set-up only), SCRAM (SASL_PLAINTEXT, SCRAM-SHA-256/512, users made
#     with kafka-storage --add-scram), MTLS (SSL, ssl.client.auth=required), UNSEC
#     (OAUTHBEARER, Kafka's unsecured-JWS validator), OIDC (OAUTHBEARER,
#     OAuthBearerValidatorCallbackHandler against authlab's JWKS), KRB (GSSAPI);
#   - topic auth-events (2 partitions).
# Writes .cache/auth/env (KBATCH_AUTH_* lines, read by the tests) and prints its path.
# Stop with scripts/auth-down.sh.  Usage: [AUTH_KERBEROS=0] [AUTH_TOKEN_TTL=20s] scripts/auth-up.sh
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=auth-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/auth-lib.sh"
k_init
[ -f "$AUTH_DIR/.gitignore" ] || echo '*' >"$AUTH_DIR/.gitignore"
a_down
t0=$SECONDS
mode=$(k_mode "$KAFKA_VERSION")
[ "$mode" = kraft ] || adie "the auth lab needs Kafka 3.9 or later (KRaft with --standalone), not $KAFKA_VERSION"
command -v openssl >/dev/null || adie "openssl not found"
libs=$(k_libs "$KAFKA_VERSION")

PKI=$AUTH_DIR/pki SEC=$AUTH_DIR/secrets OIDC=$AUTH_DIR/oidc KRB=$AUTH_DIR/krb
rm -rf "$PKI" "$SEC"
mkdir -p "$PKI" "$SEC" "$OIDC" "$KRB"
chmod 700 "$SEC"
rand() { head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
secret() { (umask 077; printf '%s\n' "$2" >"$SEC/$1"); }

# ---- secrets (random per run; the tests grep every output for them) ----
secret alice.pw "alice-$(rand)"
# Non-ASCII (NFC, unchanged by SASLprep), given to Kafka as UTF-8.
secret bjorn.pw "pässwörd-日本語-$(rand)"
# A password SASLprep (RFC 4013) changes: "e" + U+0301 (combining acute) becomes "é" under NFKC.
# Kafka's own clients do not SASLprep, so the broker holds the credential of the bytes as typed.
secret carol.pw "$(printf 'cafe\xcc\x81-')$(rand)"
secret client.secret "cs-$(rand)"
secret key.pass "kp-$(rand)"
secret kbatch-krb.pw "krb-$(rand)"

# ---- PKI ----
ossl() { openssl "$@" 2>>"$PKI/openssl.log"; }
mkca() { # NAME
  ossl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=kbatch auth lab $1 CA" \
    -keyout "$PKI/$1-ca.key" -out "$PKI/$1-ca.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
}
mkcert() { # CA NAME SUBJECT EXT...
  local ca=$1 name=$2 subj=$3
  shift 3
  ossl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$PKI/$name.key" -out "$PKI/$name.csr"
  printf '%s\n' "$@" >"$PKI/$name.ext"
  ossl x509 -req -in "$PKI/$name.csr" -CA "$PKI/$ca-ca.pem" -CAkey "$PKI/$ca-ca.key" -CAcreateserial \
    -days 2 -extfile "$PKI/$name.ext" -out "$PKI/$name.pem"
}
mkca lab
mkca rogue
mkcert lab broker "/CN=localhost" "subjectAltName=DNS:localhost,IP:127.0.0.1" "extendedKeyUsage=serverAuth"
mkcert lab client "/CN=kbatch-client" "extendedKeyUsage=clientAuth"
mkcert rogue rogue-client "/CN=kbatch-client" "extendedKeyUsage=clientAuth"
# The broker's PEM keystore: PKCS#8 key then the certificate.
ossl pkcs8 -topk8 -nocrypt -in "$PKI/broker.key" -out "$PKI/broker-key.pem"
cat "$PKI/broker-key.pem" "$PKI/broker.pem" >"$PKI/broker-keystore.pem"
# The client key, encrypted with the passphrase: PKCS#8 (PBES2, AES-256) and legacy PEM (RFC 1423).
ossl pkcs8 -topk8 -v2 aes-256-cbc -in "$PKI/client.key" -passout "file:$SEC/key.pass" -out "$PKI/client-key-pkcs8.pem"
ossl rsa -in "$PKI/client.key" -aes256 -traditional -passout "file:$SEC/key.pass" -out "$PKI/client-key-legacy.pem"
chmod 600 "$PKI"/*.key "$PKI"/*-key*.pem

# ---- OIDC provider ----
(cd "$AUTH_ROOT" && go build -o "$OIDC/authlab" ./internal/authlab) || adie "building internal/authlab failed"
printf 'kbatch:%s\n' "$(cat "$SEC/client.secret")" >"$OIDC/oidc-clients"
chmod 600 "$OIDC/oidc-clients"
rm -f "$OIDC/oidc-url"
# shellcheck disable=SC2016
setsid sh -c 'echo $$ >"$0"; exec "$@"' "$OIDC/pid" "$OIDC/authlab" -dir "$OIDC" -ttl "${AUTH_TOKEN_TTL:-20s}" \
  >"$OIDC/log" 2>&1 </dev/null 9>&- &
for _ in $(seq 1 100); do [ -s "$OIDC/oidc-url" ] && break; sleep 0.1; done
[ -s "$OIDC/oidc-url" ] || { cat "$OIDC/log" >&2; adie "authlab did not start"; }
oidc_url=$(cat "$OIDC/oidc-url")

# ---- ports ----
ports=()
# pick: a free port not picked before (the caller adds it to ports: $(pick) runs in a subshell).
pick() { local p; while :; do p=$(k_pick_port); case " ${ports[*]} " in *" $p "*) ;; *) echo "$p"; return ;; esac; done; }
p_plain=$(pick); p_ctl=$(pick)
ports+=("$p_plain" "$p_ctl")
p_scram=$(pick); ports+=("$p_scram")
p_mtls=$(pick); ports+=("$p_mtls")
p_unsec=$(pick); ports+=("$p_unsec")
p_oidc=$(pick); ports+=("$p_oidc")
p_krb=$(pick); ports+=("$p_krb")
p_kdc=$(pick); ports+=("$p_kdc")

# ---- KDC ----
kerberos=0
if [ "${AUTH_KERBEROS:-1}" != 0 ]; then
  if command -v krb5kdc >/dev/null && command -v kadmin.local >/dev/null; then
    kerberos=1
  else
    alog "krb5kdc not installed (apt-get install krb5-kdc krb5-admin-server krb5-user): no GSSAPI listener"
  fi
fi
if [ "$kerberos" = 1 ]; then
  rm -rf "$KRB/db"
  mkdir -p "$KRB/db"
  cat >"$KRB/kdc.conf" <<CONF
[kdcdefaults]
 kdc_ports = $p_kdc
 kdc_tcp_ports = $p_kdc
[realms]
 $AUTH_REALM = {
  database_name = $KRB/db/principal
  key_stash_file = $KRB/db/stash
  acl_file = $KRB/kadm5.acl
  kdc_ports = $p_kdc
  kdc_tcp_ports = $p_kdc
  max_life = 10h 0m 0s
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  default_principal_flags = +preauth
 }
[logging]
 kdc = FILE:$KRB/kdc.log
CONF
  : >"$KRB/kadm5.acl"
  cat >"$KRB/krb5.conf" <<CONF
[libdefaults]
 default_realm = $AUTH_REALM
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
 dns_canonicalize_hostname = false
 udp_preference_limit = 1
 ticket_lifetime = 10h
 default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
 $AUTH_REALM = {
  kdc = 127.0.0.1:$p_kdc
 }
[domain_realm]
 localhost = $AUTH_REALM
CONF
  export KRB5_CONFIG=$KRB/krb5.conf KRB5_KDC_PROFILE=$KRB/kdc.conf
  kdb5_util create -s -r "$AUTH_REALM" -P "master-$(rand)" >"$KRB/setup.log" 2>&1 || { cat "$KRB/setup.log" >&2; adie "kdb5_util create failed"; }
  kadm() { kadmin.local -r "$AUTH_REALM" -q "$1" >>"$KRB/setup.log" 2>&1 || { cat "$KRB/setup.log" >&2; adie "kadmin.local: $1 failed"; }; }
  kadm "addprinc -randkey kafka/localhost"
  rm -f "$KRB/kafka.keytab" "$KRB/kbatch.keytab"
  kadm "ktadd -k $KRB/kafka.keytab kafka/localhost"
  kadmin.local -r "$AUTH_REALM" -q "addprinc -pw $(cat "$SEC/kbatch-krb.pw") kbatch" >>"$KRB/setup.log" 2>&1 || adie "addprinc kbatch failed"
  sed -i 's/-pw [^ ]*/-pw [redacted]/' "$KRB/setup.log"
  kadm "ktadd -norandkey -k $KRB/kbatch.keytab kbatch"
  chmod 600 "$KRB"/*.keytab
  # shellcheck disable=SC2016
  setsid sh -c 'echo $$ >"$0"; exec "$@"' "$KRB/pid" krb5kdc -n -r "$AUTH_REALM" \
    >>"$KRB/kdc.out" 2>&1 </dev/null 9>&- &
  for _ in $(seq 1 100); do k_port_open "$p_kdc" && break; sleep 0.1; done
  k_port_open "$p_kdc" || { cat "$KRB/kdc.out" "$KRB/kdc.log" >&2 2>/dev/null; adie "krb5kdc did not start on $p_kdc"; }
fi

# ---- broker ----
rm -rf "$K_DATA"
k_write_log4j
listeners="PLAINTEXT://127.0.0.1:$p_plain,CONTROLLER://127.0.0.1:$p_ctl,SCRAM://127.0.0.1:$p_scram,MTLS://127.0.0.1:$p_mtls,UNSEC://127.0.0.1:$p_unsec,OIDC://127.0.0.1:$p_oidc"
advertised="PLAINTEXT://127.0.0.1:$p_plain,SCRAM://127.0.0.1:$p_scram,MTLS://127.0.0.1:$p_mtls,UNSEC://127.0.0.1:$p_unsec,OIDC://127.0.0.1:$p_oidc"
protomap="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SCRAM:SASL_PLAINTEXT,MTLS:SSL,UNSEC:SASL_PLAINTEXT,OIDC:SASL_PLAINTEXT"
if [ "$kerberos" = 1 ]; then
  listeners+=",KRB://localhost:$p_krb"
  advertised+=",KRB://localhost:$p_krb"
  protomap+=",KRB:SASL_PLAINTEXT"
fi
cat >"$K_PROPS" <<PROPS
# written by scripts/auth-up.sh (Kafka $KAFKA_VERSION)
process.roles=broker,controller
node.id=1
listeners=$listeners
advertised.listeners=$advertised
listener.security.protocol.map=$protomap
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.bootstrap.servers=127.0.0.1:$p_ctl
log.dirs=$K_DATA
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# Brokers ask clients to log in again after this long (KIP-368).
connections.max.reauth.ms=10000

listener.name.scram.sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512
listener.name.scram.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.scram.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;

listener.name.mtls.ssl.client.auth=required
listener.name.mtls.ssl.keystore.type=PEM
listener.name.mtls.ssl.keystore.location=$PKI/broker-keystore.pem
listener.name.mtls.ssl.truststore.type=PEM
listener.name.mtls.ssl.truststore.location=$PKI/lab-ca.pem

listener.name.unsec.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.unsec.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";

listener.name.oidc.sasl.enabled.mechanisms=OAUTHBEARER
listener.name.oidc.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.oidc.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.oidc.oauthbearer.sasl.oauthbearer.jwks.endpoint.url=$oidc_url/jwks
listener.name.oidc.oauthbearer.sasl.oauthbearer.expected.audience=kafka
listener.name.oidc.oauthbearer.sasl.oauthbearer.expected.issuer=$oidc_url
sasl.oauthbearer.jwks.endpoint.url=$oidc_url/jwks
sasl.oauthbearer.expected.audience=kafka
sasl.oauthbearer.expected.issuer=$oidc_url
PROPS
if [ "$kerberos" = 1 ]; then
  cat >>"$K_PROPS" <<PROPS

listener.name.krb.sasl.enabled.mechanisms=GSSAPI
sasl.kerberos.service.name=kafka
listener.name.krb.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="$KRB/kafka.keytab" principal="kafka/localhost@$AUTH_REALM";
PROPS
fi

while :; do
  cid=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
  [ "${cid:0:1}" != - ] && break
done
# SCRAM users, made by Kafka itself from the passwords (UTF-8 command line: LC_ALL=C.UTF-8).
scram=(
  --add-scram "SCRAM-SHA-256=[name=alice,password=$(cat "$SEC/alice.pw")]"
  --add-scram "SCRAM-SHA-512=[name=alice,password=$(cat "$SEC/alice.pw")]"
  --add-scram "SCRAM-SHA-256=[name=bjorn,password=$(cat "$SEC/bjorn.pw")]"
  --add-scram "SCRAM-SHA-512=[name=bjorn,password=$(cat "$SEC/bjorn.pw")]"
)
if ! LC_ALL=C.UTF-8 k_tool "$libs" -Dfile.encoding=UTF-8 -Dsun.jnu.encoding=UTF-8 kafka.tools.StorageTool format --standalone \
    -t "$cid" -c "$K_PROPS" "${scram[@]}" >"$KAFKA_CACHE_DIR/format.log" 2>&1; then
  grep -v password "$KAFKA_CACHE_DIR/format.log" | tail -n 20 | cut -c1-400 >&2
  a_down
  adie "kafka-storage format failed"
fi

java_opts="-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=$oidc_url/jwks"
[ "$kerberos" = 1 ] && java_opts+=" -Djava.security.krb5.conf=$KRB/krb5.conf"
: >"$K_LOG"
KAFKA_JAVA_OPTS="$java_opts ${KAFKA_JAVA_OPTS:-}" k_start "$libs"
k_wait "$libs" 0
echo "127.0.0.1:$p_plain" >"$K_BOOTFILE"
echo "$KAFKA_VERSION" >"$K_VERFILE"
k_tool "$libs" "$(k_topic_class "$libs")" --bootstrap-server "127.0.0.1:$p_plain" --create --topic auth-events \
  --partitions 2 --replication-factor 1 >/dev/null || { a_down; adie "creating topic auth-events failed"; }
# One user made the usual way on a running cluster: kafka-configs (ConfigCommand, Admin API).
LC_ALL=C.UTF-8 k_tool "$libs" -Dfile.encoding=UTF-8 -Dsun.jnu.encoding=UTF-8 \
  "$(k_class "$libs" org.apache.kafka.tools.ConfigCommand kafka.admin.ConfigCommand)" --bootstrap-server "127.0.0.1:$p_plain" \
  --alter --entity-type users --entity-name carol \
  --add-config "SCRAM-SHA-256=[password=$(cat "$SEC/carol.pw")]" \
  >/dev/null 2>"$KAFKA_CACHE_DIR/configs.err" || { grep -v password "$KAFKA_CACHE_DIR/configs.err" >&2; a_down; adie "kafka-configs could not add user carol"; }

{
  echo "KBATCH_AUTH_DIR=$AUTH_DIR"
  echo "KBATCH_AUTH_KAFKA_VERSION=$KAFKA_VERSION"
  echo "KBATCH_AUTH_BROKER_LOG=$K_LOG"
  echo "KBATCH_AUTH_PLAINTEXT=127.0.0.1:$p_plain"
  echo "KBATCH_AUTH_SCRAM=127.0.0.1:$p_scram"
  echo "KBATCH_AUTH_MTLS=127.0.0.1:$p_mtls"
  echo "KBATCH_AUTH_UNSEC=127.0.0.1:$p_unsec"
  echo "KBATCH_AUTH_OIDC=127.0.0.1:$p_oidc"
  echo "KBATCH_AUTH_OIDC_URL=$oidc_url"
  echo "KBATCH_AUTH_PKI=$PKI"
  echo "KBATCH_AUTH_SECRETS=$SEC"
  if [ "$kerberos" = 1 ]; then
    echo "KBATCH_AUTH_KRB=localhost:$p_krb"
    echo "KBATCH_AUTH_KRB_DIR=$KRB"
    echo "KBATCH_AUTH_KRB_REALM=$AUTH_REALM"
  fi
} >"$AUTH_DIR/env"
alog "up in $((SECONDS - t0))s: Kafka $KAFKA_VERSION (pid $(cat "$K_PIDFILE")), authlab $oidc_url, kerberos=$kerberos"
echo "$AUTH_DIR/env"
