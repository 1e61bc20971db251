package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The real-server authentication suite: every mechanism against the real
// servers of scripts/auth-up.sh (Apache Kafka with a listener per
// mechanism, an MIT KDC, an OIDC provider), through the kbatch binary and
// config profiles. `make test-auth` starts the lab, runs it and stops the
// lab; without KBATCH_TEST_AUTH_ENV (the lab's env file) it is skipped.
//
// Every run's stdout, stderr, --log file and offset store are searched for
// every secret of the lab (passwords, client secret, key passphrase,
// tokens); none may appear.

// authLab is the lab as its env file describes it.
type authLab struct {
	env     map[string]string
	secrets map[string]string // file name in secrets/ -> secret
	dir     string            // a test folder for profiles, logs, stores
}

func newAuthLab(t *testing.T) *authLab {
	t.Helper()
	path := os.Getenv("KBATCH_TEST_AUTH_ENV")
	if path == "" {
		t.Skip("KBATCH_TEST_AUTH_ENV not set (make test-auth runs this against scripts/auth-up.sh)")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lab := &authLab{env: map[string]string{}, secrets: map[string]string{}, dir: t.TempDir()}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			lab.env[k] = v
		}
	}
	ents, err := os.ReadDir(lab.env["KBATCH_AUTH_SECRETS"])
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data := readFile(t, filepath.Join(lab.env["KBATCH_AUTH_SECRETS"], e.Name()))
		lab.secrets[e.Name()] = strings.TrimRight(string(data), "\n")
	}
	if len(lab.secrets) < 5 {
		t.Fatalf("the lab has %d secrets, want at least 5", len(lab.secrets))
	}
	return lab
}

func (l *authLab) get(t *testing.T, key string) string {
	t.Helper()
	v := l.env[key]
	if v == "" {
		t.Fatalf("%s missing from the lab's env file", key)
	}
	return v
}

func (l *authLab) pki(name string) string { return filepath.Join(l.env["KBATCH_AUTH_PKI"], name) }
func (l *authLab) secretFile(name string) string {
	return filepath.Join(l.env["KBATCH_AUTH_SECRETS"], name)
}

// profile writes a config file holding body and returns its path.
func (l *authLab) profile(t *testing.T, name, body string) string {
	t.Helper()
	return writeFile(t, l.dir, name+".toml", body, 0o600)
}

// jwtLike matches a JWT or JWS anywhere in a text.
var jwtLike = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.`)

// noSecrets fails when any secret of the lab, any of extra, or anything
// shaped like a JWT appears in texts (outputs, logs, the store file).
func (l *authLab) noSecrets(t *testing.T, texts map[string]string, extra ...string) {
	t.Helper()
	secrets := append([]string(nil), extra...)
	for _, s := range l.secrets {
		secrets = append(secrets, s)
	}
	for where, text := range texts {
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s shows a secret (%d bytes long)", where, len(s))
			}
		}
		if m := jwtLike.FindString(text); m != "" {
			t.Errorf("%s shows a token: %.20s...", where, m)
		}
	}
}

// topicsOK runs `kbatch topics --json` on the profile and checks it lists
// auth-events with its 2 partitions; it returns the run.
func (l *authLab) topicsOK(t *testing.T, env []string, args ...string) cliRun {
	t.Helper()
	r := execKbatch(t, env, append([]string{"topics", "--json"}, args...)...)
	infos := topicsJSON(t, r)
	found := false
	for _, in := range infos {
		if in.Topic == "auth-events" && in.PartitionCount == 2 {
			found = true
		}
	}
	if !found {
		t.Fatalf("auth-events (2 partitions) not in %+v", infos)
	}
	l.noSecrets(t, map[string]string{"stdout": r.stdout, "stderr": r.stderr})
	return r
}

// refused runs `kbatch topics` and checks the one-line error of docs/design.md §3
// with exit code, the wanted words, and no secret.
func (l *authLab) refused(t *testing.T, env []string, code int, want []string, args ...string) {
	t.Helper()
	r := execKbatch(t, env, append([]string{"topics", "--dial-timeout", "10s"}, args...)...)
	checkOneLine(t, r, code, want)
	l.noSecrets(t, map[string]string{"stdout": r.stdout, "stderr": r.stderr})
}

// watchOK produces n records through the set-up listener, then runs a
// headless watch to the end with --log and a store, checks every record
// arrived, and searches stdout, stderr, the log and the store for secrets.
func (l *authLab) watchOK(t *testing.T, env []string, args ...string) {
	t.Helper()
	start := l.produce(t, 3)
	logf, store := filepath.Join(l.dir, t.Name()[strings.LastIndex(t.Name(), "/")+1:]+".log"), filepath.Join(t.TempDir(), "offsets.db")
	r := execKbatch(t, env, append([]string{"watch", "--no-tui", "--until-end", "-t", "auth-events", "--reset", "earliest",
		"--log", logf, "--store", store}, args...)...)
	if r.code != 0 {
		t.Fatalf("watch: exit %d: %s", r.code, r.stderr)
	}
	if got := watchRecords(t, r.stdout); got < start+3 {
		t.Errorf("watch read %d records, want at least %d", got, start+3)
	}
	logData, _ := os.ReadFile(logf)
	storeData, _ := os.ReadFile(store)
	if len(logData) == 0 || len(storeData) == 0 {
		t.Fatalf("no --log (%d bytes) or store (%d bytes)", len(logData), len(storeData))
	}
	l.noSecrets(t, map[string]string{"stdout": r.stdout, "stderr": r.stderr, "--log": string(logData), "store": string(storeData)})
}

// watchRecords sums the records of the batch lines of a headless watch.
func watchRecords(t *testing.T, stdout string) int64 {
	t.Helper()
	var n int64
	for _, line := range strings.Split(stdout, "\n") {
		var ev struct {
			Type    string `json:"type"`
			Records int64  `json:"records"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "batch" {
			n += ev.Records
		}
	}
	return n
}

// produce writes n records to auth-events through the PLAINTEXT listener
// and returns how many the topic held before.
func (l *authLab) produce(t *testing.T, n int) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(l.get(t, "KBATCH_AUTH_PLAINTEXT")))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before, err := listEnd(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "auth-events", Value: []byte(fmt.Sprintf("auth record %d", i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	return before
}

// listEnd sums the end offsets of auth-events.
func listEnd(ctx context.Context, cl *kgo.Client) (int64, error) {
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "auth-events")
	if err != nil {
		return 0, err
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	return total, ends.Error()
}

func TestRealAuthSCRAM(t *testing.T) {
	lab := newAuthLab(t)
	addr := lab.get(t, "KBATCH_AUTH_SCRAM")
	alice, bjorn := lab.secrets["alice.pw"], lab.secrets["bjorn.pw"]
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech+" password from env", func(t *testing.T) {
			lab.topicsOK(t, []string{"KBATCH_SASL_PASSWORD=" + alice}, "-b", addr, "--sasl-mechanism", mech, "--sasl-user", "alice")
		})
		t.Run(mech+" non-ASCII password (SASLprep) from a file", func(t *testing.T) {
			if !strings.ContainsAny(bjorn, "äö日") {
				t.Fatalf("bjorn's password is ASCII")
			}
			cfg := lab.profile(t, "bjorn-"+mech, fmt.Sprintf(`[clusters.bjorn]
brokers = [%q]
sasl = { mechanism = %q, username = "bjorn", password_file = %q }
`, addr, mech, lab.secretFile("bjorn.pw")))
			lab.topicsOK(t, nil, "--config", cfg, "--cluster", "bjorn")
		})
		t.Run(mech+" wrong password", func(t *testing.T) {
			lab.refused(t, []string{"KBATCH_SASL_PASSWORD=" + alice + "x"}, exitFailure,
				[]string{"SASL authentication failed for alice (" + mech + ")", "wrong user name or password"},
				"-b", addr, "--sasl-mechanism", mech, "--sasl-user", "alice")
		})
	}
	t.Run("password SASLprep changes, user made by kafka-configs", func(t *testing.T) {
		// Kafka does not SASLprep (its clients and its tools use the
		// password's UTF-8 bytes as typed): a password that SASLprep
		// changes ("e" + U+0301 becomes "é") must still be accepted.
		carol := lab.secrets["carol.pw"]
		if !strings.Contains(carol, "e\u0301") {
			t.Fatalf("carol's password has no combining accent")
		}
		lab.topicsOK(t, nil, "-b", addr, "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "carol", "--sasl-password-file", lab.secretFile("carol.pw"))
		lab.refused(t, []string{"KBATCH_SASL_PASSWORD=" + carol + "x"}, exitFailure, []string{"SASL authentication failed for carol (SCRAM-SHA-256)"},
			"-b", addr, "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "carol")
	})
	t.Run("password from a command, watch with --log and a store", func(t *testing.T) {
		cfg := lab.profile(t, "alice-cmd", fmt.Sprintf(`[clusters.alice]
brokers = [%q]
sasl = { mechanism = "SCRAM-SHA-512", username = "alice", password_command = "cat %s" }
`, addr, lab.secretFile("alice.pw")))
		lab.topicsOK(t, nil, "--config", cfg, "--cluster", "alice")
		lab.watchOK(t, nil, "--config", cfg, "--cluster", "alice")
	})
	t.Run("password command that fails", func(t *testing.T) {
		cfg := lab.profile(t, "alice-badcmd", fmt.Sprintf(`[clusters.alice]
brokers = [%q]
sasl = { mechanism = "SCRAM-SHA-512", username = "alice", password_command = "echo %s >&2; exit 3" }
`, addr, alice))
		r := execKbatch(t, nil, "topics", "--config", cfg, "--cluster", "alice")
		checkOneLine(t, r, exitUsage, []string{"password_command", "the command failed (exit status 3)"})
		// The command's text is in the profile, not in the output; its stderr is dropped.
		lab.noSecrets(t, map[string]string{"stdout": r.stdout, "stderr": r.stderr})
	})
	t.Run("unknown user", func(t *testing.T) {
		lab.refused(t, []string{"KBATCH_SASL_PASSWORD=" + alice}, exitFailure, []string{"SASL authentication failed for mallory"},
			"-b", addr, "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "mallory")
	})
}

func TestRealAuthMTLS(t *testing.T) {
	lab := newAuthLab(t)
	addr := lab.get(t, "KBATCH_AUTH_MTLS")
	ca, cert := lab.pki("lab-ca.pem"), lab.pki("client.pem")
	pass := lab.secrets["key.pass"]
	t.Run("plain key from flags", func(t *testing.T) {
		lab.topicsOK(t, nil, "-b", addr, "--tls-ca", ca, "--tls-cert", cert, "--tls-key", lab.pki("client.key"))
	})
	keys := []struct{ label, key, source string }{
		{"PKCS#8 key, passphrase from a file", "client-key-pkcs8.pem", fmt.Sprintf("key_password_file = %q", lab.secretFile("key.pass"))},
		{"PKCS#8 key, passphrase from the environment", "client-key-pkcs8.pem", `key_password_env = "KBATCH_TEST_KEY_PASS"`},
		{"legacy PEM key, passphrase from a command", "client-key-legacy.pem", fmt.Sprintf("key_password_command = \"cat %s\"", lab.secretFile("key.pass"))},
	}
	for i, k := range keys {
		t.Run(k.label, func(t *testing.T) {
			cfg := lab.profile(t, fmt.Sprintf("mtls-%d", i), fmt.Sprintf(`[clusters.mtls]
brokers = [%q]
[clusters.mtls.tls]
ca_file = %q
cert_file = %q
key_file = %q
%s
`, addr, ca, cert, lab.pki(k.key), k.source))
			env := []string{"KBATCH_TEST_KEY_PASS=" + pass}
			lab.topicsOK(t, env, "--config", cfg, "--cluster", "mtls")
			if i == 0 {
				lab.watchOK(t, env, "--config", cfg, "--cluster", "mtls")
			}
		})
	}
	t.Run("wrong passphrase", func(t *testing.T) {
		cfg := lab.profile(t, "mtls-wrong", fmt.Sprintf(`[clusters.mtls]
brokers = [%q]
tls = { ca_file = %q, cert_file = %q, key_file = %q, key_password_env = "KBATCH_TEST_KEY_PASS" }
`, addr, ca, cert, lab.pki("client-key-pkcs8.pem")))
		lab.refused(t, []string{"KBATCH_TEST_KEY_PASS=" + pass + "x"}, exitUsage, []string{"cannot be decrypted: wrong passphrase"}, "--config", cfg, "--cluster", "mtls")
	})
	t.Run("encrypted key without a passphrase", func(t *testing.T) {
		lab.refused(t, nil, exitUsage, []string{"is encrypted", "key_password_env"},
			"-b", addr, "--tls-ca", ca, "--tls-cert", cert, "--tls-key", lab.pki("client-key-pkcs8.pem"))
	})
	t.Run("no client certificate", func(t *testing.T) {
		lab.refused(t, nil, exitFailure, []string{"refused the TLS connection", "wants a client certificate"}, "-b", addr, "--tls-ca", ca)
	})
	t.Run("certificate of another CA", func(t *testing.T) {
		lab.refused(t, nil, exitFailure, []string{"refused the TLS connection", "does not accept the client certificate"},
			"-b", addr, "--tls-ca", ca, "--tls-cert", lab.pki("rogue-client.pem"), "--tls-key", lab.pki("rogue-client.key"))
	})
}

// unsecuredJWS is a token for Kafka's unsecured validator: alg "none",
// claims sub, iat, exp.
func unsecuredJWS(sub string, exp time.Time) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none"}) + "." + enc(map[string]any{"sub": sub, "iat": time.Now().Unix(), "exp": exp.Unix()}) + "."
}

func TestRealAuthOAuthBearerStaticToken(t *testing.T) {
	lab := newAuthLab(t)
	addr := lab.get(t, "KBATCH_AUTH_UNSEC")
	tok := unsecuredJWS("kbatch", time.Now().Add(10*time.Minute))
	tokFile := writeFile(t, lab.dir, "static.token", tok+"\n", 0o600)
	for _, src := range []struct{ label, key string }{
		{"token_file", fmt.Sprintf("token_file = %q", tokFile)},
		{"token_env", `token_env = "KBATCH_TEST_TOKEN"`},
		{"token_command", fmt.Sprintf("token_command = \"cat %s\"", tokFile)},
	} {
		t.Run(src.label, func(t *testing.T) {
			cfg := lab.profile(t, "unsec-"+src.label, fmt.Sprintf(`[clusters.unsec]
brokers = [%q]
[clusters.unsec.sasl]
mechanism = "OAUTHBEARER"
%s
extensions = { traceId = "kbatch-test" }
`, addr, src.key))
			env := []string{"KBATCH_TEST_TOKEN=" + tok}
			r := lab.topicsOK(t, env, "--config", cfg, "--cluster", "unsec")
			lab.noSecrets(t, map[string]string{"stdout": r.stdout, "stderr": r.stderr}, tok)
			if src.label == "token_file" {
				lab.watchOK(t, env, "--config", cfg, "--cluster", "unsec")
			}
		})
	}
	t.Run("expired token", func(t *testing.T) {
		old := writeFile(t, lab.dir, "old.token", unsecuredJWS("kbatch", time.Now().Add(-time.Minute))+"\n", 0o600)
		cfg := lab.profile(t, "unsec-old", fmt.Sprintf("[clusters.unsec]\nbrokers = [%q]\nsasl = { mechanism = \"OAUTHBEARER\", token_file = %q }\n", addr, old))
		lab.refused(t, nil, exitFailure, []string{"OAUTHBEARER token (token_file)", "expired at"}, "--config", cfg, "--cluster", "unsec")
	})
	t.Run("token the broker refuses", func(t *testing.T) {
		// A token with no sub claim: the unsecured validator refuses it.
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		bad := enc(`{"alg":"none"}`) + "." + enc(fmt.Sprintf(`{"exp":%d}`, time.Now().Add(time.Hour).Unix())) + "."
		f := writeFile(t, lab.dir, "bad.token", bad+"\n", 0o600)
		cfg := lab.profile(t, "unsec-bad", fmt.Sprintf("[clusters.unsec]\nbrokers = [%q]\nsasl = { mechanism = \"OAUTHBEARER\", token_file = %q }\n", addr, f))
		lab.refused(t, nil, exitFailure, []string{"SASL authentication failed for OAUTHBEARER", "refused the token"}, "--config", cfg, "--cluster", "unsec")
	})
	t.Run("token file read again before expiry", func(t *testing.T) {
		// A token that expires 15 s from now, replaced after 6 s by one
		// that lasts; the broker asks for a new login every 10 s
		// (connections.max.reauth.ms) and drops a connection whose token
		// expired, so records produced after 20 s are only read when
		// kbatch read the file again.
		f := writeFile(t, lab.dir, "rolling.token", unsecuredJWS("kbatch", time.Now().Add(15*time.Second))+"\n", 0o600)
		cfg := lab.profile(t, "unsec-rolling", fmt.Sprintf("[clusters.unsec]\nbrokers = [%q]\nsasl = { mechanism = \"OAUTHBEARER\", token_file = %q }\n", addr, f))
		next := unsecuredJWS("kbatch", time.Now().Add(10*time.Minute))
		lab.longWatch(t, nil, func(elapsed time.Duration) {
			if elapsed >= 6*time.Second {
				if err := os.WriteFile(f, []byte(next+"\n"), 0o600); err != nil {
					t.Error(err)
				}
			}
		}, "--config", cfg, "--cluster", "unsec")
	})
}

// longWatch runs a headless watch for about 30 s while records are
// produced at 0, 12 and 24 s (tick is called each second with the time
// elapsed), and checks the watch read all of them and ended cleanly when
// stopped; outputs and the log are searched for secrets.
func (l *authLab) longWatch(t *testing.T, env []string, tick func(time.Duration), args ...string) {
	t.Helper()
	logf := filepath.Join(l.dir, "long-watch.log")
	start := l.produce(t, 0)
	home := t.TempDir()
	cmd := exec.Command(kbatchBinary(t), append([]string{"watch", "--no-tui", "-t", "auth-events", "--reset", "latest",
		"--log", logf, "--no-store"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state")}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	produced := 0
	for time.Since(t0) < 32*time.Second {
		el := time.Since(t0)
		if want := 1 + int(el/(12*time.Second)); produced < want && produced < 3 && el >= 3*time.Second {
			l.produce(t, 1)
			produced++
		}
		if tick != nil {
			tick(el)
		}
		time.Sleep(time.Second)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("watch ended with %v: %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("watch did not stop on SIGTERM")
	}
	_ = start
	if got := watchRecords(t, stdout.String()); got != int64(produced) || produced != 3 {
		t.Errorf("watch read %d records of the %d produced over 30 s; stderr: %s", got, produced, stderr.String())
	}
	logData, _ := os.ReadFile(logf)
	l.noSecrets(t, map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "--log": string(logData)})
}

func TestRealAuthOAuthBearerOIDC(t *testing.T) {
	lab := newAuthLab(t)
	addr, idp := lab.get(t, "KBATCH_AUTH_OIDC"), lab.get(t, "KBATCH_AUTH_OIDC_URL")
	secret := lab.secrets["client.secret"]
	profile := func(name, secretKey string) string {
		return lab.profile(t, name, fmt.Sprintf(`[clusters.idp]
brokers = [%q]
[clusters.idp.sasl]
mechanism = "OAUTHBEARER"
token_endpoint = "%s/token"
client_id = "kbatch"
%s
scope = "kafka:read"
extensions = { traceId = "kbatch-test" }
`, addr, idp, secretKey))
	}
	for _, src := range []struct{ label, key string }{
		{"client_secret_file", fmt.Sprintf("client_secret_file = %q", lab.secretFile("client.secret"))},
		{"client_secret_env", `client_secret_env = "KBATCH_TEST_CLIENT_SECRET"`},
		{"client_secret_command", fmt.Sprintf("client_secret_command = \"cat %s\"", lab.secretFile("client.secret"))},
	} {
		t.Run(src.label, func(t *testing.T) {
			cfg := profile("idp-"+src.label, src.key)
			env := []string{"KBATCH_TEST_CLIENT_SECRET=" + secret}
			lab.topicsOK(t, env, "--config", cfg, "--cluster", "idp")
			if src.label == "client_secret_file" {
				lab.watchOK(t, env, "--config", cfg, "--cluster", "idp")
			}
		})
	}
	t.Run("wrong client secret", func(t *testing.T) {
		cfg := profile("idp-wrong", `client_secret_env = "KBATCH_TEST_CLIENT_SECRET"`)
		lab.refused(t, []string{"KBATCH_TEST_CLIENT_SECRET=" + secret + "x"}, exitFailure,
			[]string{"token endpoint refused", "401", "invalid_client", "check client_id and the client secret"}, "--config", cfg, "--cluster", "idp")
	})
	t.Run("a token the OIDC validator refuses", func(t *testing.T) {
		// An unsigned token (alg none) to the listener that checks signatures.
		f := writeFile(t, lab.dir, "unsigned.token", unsecuredJWS("kbatch", time.Now().Add(time.Hour))+"\n", 0o600)
		cfg := lab.profile(t, "idp-unsigned", fmt.Sprintf("[clusters.idp]\nbrokers = [%q]\nsasl = { mechanism = \"OAUTHBEARER\", token_file = %q }\n", addr, f))
		lab.refused(t, nil, exitFailure, []string{"SASL authentication failed for OAUTHBEARER", "refused the token"}, "--config", cfg, "--cluster", "idp")
	})
	t.Run("tokens fetched again before expiry", func(t *testing.T) {
		// authlab's tokens last AUTH_TOKEN_TTL (20 s); the broker asks
		// for a new login every 10 s. Over 30 s kbatch must have asked
		// the endpoint again, and read every record.
		before := idpIssued(t, idp)
		cfg := profile("idp-long", fmt.Sprintf("client_secret_file = %q", lab.secretFile("client.secret")))
		lab.longWatch(t, nil, nil, "--config", cfg, "--cluster", "idp")
		if got := idpIssued(t, idp) - before; got < 2 {
			t.Errorf("the token endpoint issued %d tokens during a 30 s watch, want at least 2 (a refresh)", got)
		}
	})
}

func idpIssued(t *testing.T, idp string) int64 {
	t.Helper()
	resp, err := http.Get(idp + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct{ Issued int64 }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Issued
}

func TestRealAuthKerberos(t *testing.T) {
	lab := newAuthLab(t)
	if lab.env["KBATCH_AUTH_KRB"] == "" {
		t.Skip("the lab runs without a KDC (krb5-kdc not installed, or AUTH_KERBEROS=0)")
	}
	addr, dir, realm := lab.get(t, "KBATCH_AUTH_KRB"), lab.get(t, "KBATCH_AUTH_KRB_DIR"), lab.get(t, "KBATCH_AUTH_KRB_REALM")
	krb5conf := filepath.Join(dir, "krb5.conf")
	profile := func(name, extra string) string {
		return lab.profile(t, name, fmt.Sprintf(`[clusters.corp]
brokers = [%q]
[clusters.corp.sasl]
mechanism = "GSSAPI"
username = "kbatch"
kerberos_realm = %q
kerberos_config = %q
%s
`, addr, realm, krb5conf, extra))
	}
	t.Run("keytab", func(t *testing.T) {
		cfg := profile("krb-keytab", fmt.Sprintf("kerberos_keytab = %q", filepath.Join(dir, "kbatch.keytab")))
		lab.topicsOK(t, nil, "--config", cfg, "--cluster", "corp")
		lab.watchOK(t, nil, "--config", cfg, "--cluster", "corp")
	})
	t.Run("password from a file", func(t *testing.T) {
		cfg := profile("krb-password", fmt.Sprintf("password_file = %q", lab.secretFile("kbatch-krb.pw")))
		lab.topicsOK(t, nil, "--config", cfg, "--cluster", "corp")
	})
	t.Run("credential cache from kinit", func(t *testing.T) {
		cc := filepath.Join(t.TempDir(), "krb5cc")
		kinit := exec.Command("kinit", "-c", cc, "-k", "-t", filepath.Join(dir, "kbatch.keytab"), "kbatch@"+realm)
		kinit.Env = append(os.Environ(), "KRB5_CONFIG="+krb5conf)
		if out, err := kinit.CombinedOutput(); err != nil {
			t.Fatalf("kinit: %v: %s", err, out)
		}
		cfg := profile("krb-ccache", fmt.Sprintf("kerberos_ccache = %q", cc))
		lab.topicsOK(t, nil, "--config", cfg, "--cluster", "corp")
	})
	t.Run("wrong password", func(t *testing.T) {
		cfg := profile("krb-wrong", `password_env = "KBATCH_TEST_KRB_PW"`)
		lab.refused(t, []string{"KBATCH_TEST_KRB_PW=" + lab.secrets["kbatch-krb.pw"] + "x"}, exitFailure,
			[]string{"Kerberos: the KDC refused the login of kbatch@" + realm, "KDC_ERR_PREAUTH_FAILED"}, "--config", cfg, "--cluster", "corp")
	})
	t.Run("wrong service name", func(t *testing.T) {
		cfg := profile("krb-service", fmt.Sprintf("kerberos_keytab = %q\nkerberos_service_name = \"kfk\"", filepath.Join(dir, "kbatch.keytab")))
		host := addr[:strings.LastIndexByte(addr, ':')]
		lab.refused(t, nil, exitFailure, []string{"does not know the brokers' principal kfk/" + host + "@" + realm}, "--config", cfg, "--cluster", "corp")
	})
	t.Run("missing keytab", func(t *testing.T) {
		cfg := profile("krb-nokeytab", fmt.Sprintf("kerberos_keytab = %q", filepath.Join(dir, "nope.keytab")))
		lab.refused(t, nil, exitUsage, []string{"kerberos_keytab", "cannot be read"}, "--config", cfg, "--cluster", "corp")
	})
}
