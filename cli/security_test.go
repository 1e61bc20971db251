package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// testPKI is a CA and a server certificate for 127.0.0.1, made in the test.
type testPKI struct {
	caPEM      []byte
	serverCert tls.Certificate
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kbatch test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "broker"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		DNSNames: []string{"broker.test"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return testPKI{
		caPEM:      pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		serverCert: tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey},
	}
}

// fakeWithTopic starts a one-broker kfake with opts and one topic of two
// partitions holding three records, created through a client set up by
// setup (TLS, SASL as needed).
func fakeWithTopic(t *testing.T, setup []kgo.Opt, opts ...kfake.Opt) string {
	t.Helper()
	fake := testkafka.Fake(t, append([]kfake.Opt{kfake.SeedTopics(2, "secure-events")}, opts...)...)
	addr := fake.ListenAddrs()[0]
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner())}, setup...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := t.Context()
	for i := range 3 {
		r := &kgo.Record{Topic: "secure-events", Partition: int32(i % 2), Value: []byte("v")}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	return addr
}

func topicsJSON(t *testing.T, r cliRun) []topicInfo {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var infos []topicInfo
	if err := json.Unmarshal([]byte(r.stdout), &infos); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	return infos
}

// checkOneLine asserts the docs/design.md §3 error shape: exit code, one line on
// stderr, no Go runtime text, wanted words present and secrets absent.
func checkOneLine(t *testing.T, r cliRun, code int, want []string, secrets ...string) {
	t.Helper()
	t.Logf("exit %d, stderr: %s", r.code, strings.TrimSpace(r.stderr))
	if r.code != code {
		t.Errorf("exit %d, want %d; stderr: %s", r.code, code, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || lines[0] == "" {
		t.Errorf("stderr has %d lines, want exactly 1:\n%s", len(lines), r.stderr)
	}
	for _, bad := range []string{"goroutine ", "panic", "runtime error"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("stderr has %q:\n%s", bad, r.stderr)
		}
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q: %s", w, r.stderr)
		}
	}
	for _, s := range secrets {
		if strings.Contains(r.stderr, s) || strings.Contains(r.stdout, s) {
			t.Errorf("output shows the secret %q", s)
		}
	}
}

func TestTLS(t *testing.T) {
	pki := newTestPKI(t)
	srvTLS := &tls.Config{Certificates: []tls.Certificate{pki.serverCert}, MinVersion: tls.VersionTLS12}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pki.caPEM)
	addr := fakeWithTopic(t, []kgo.Opt{kgo.DialTLSConfig(&tls.Config{RootCAs: pool})}, kfake.TLS(srvTLS))
	dir := t.TempDir()
	ca := writeFile(t, dir, "ca.pem", string(pki.caPEM), 0o644)

	t.Run("ca file flag", func(t *testing.T) {
		infos := topicsJSON(t, execKbatch(t, nil, "topics", "--json", "-b", addr, "--tls-ca", ca))
		if len(infos) != 1 || infos[0].Topic != "secure-events" || infos[0].PartitionCount != 2 {
			t.Fatalf("topics %+v", infos)
		}
		hw := infos[0].Partitions[0].HighWatermark + infos[0].Partitions[1].HighWatermark
		if hw != 3 {
			t.Errorf("high watermarks sum to %d, want 3", hw)
		}
	})
	t.Run("config profile with server_name", func(t *testing.T) {
		cfg := writeFile(t, dir, "tls.toml", `
[clusters.secure]
brokers = ["`+addr+`"]
[clusters.secure.tls]
ca_file = "ca.pem"
server_name = "broker.test"
`, 0o600)
		topicsJSON(t, execKbatch(t, nil, "topics", "--json", "--config", cfg, "--cluster", "secure"))
	})
	t.Run("unknown CA", func(t *testing.T) {
		r := execKbatch(t, nil, "topics", "-b", addr, "--tls", "--dial-timeout", "5s")
		checkOneLine(t, r, exitFailure, []string{"certificate"})
	})
	t.Run("wrong server name", func(t *testing.T) {
		r := execKbatch(t, nil, "topics", "-b", addr, "--tls-ca", ca, "--tls-server-name", "other.test", "--dial-timeout", "5s")
		checkOneLine(t, r, exitFailure, []string{"certificate"})
	})
	t.Run("insecure skip verify warns", func(t *testing.T) {
		r := execKbatch(t, nil, "topics", "--json", "-b", addr, "--tls-insecure-skip-verify")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "warning: TLS certificate checks are off") {
			t.Errorf("no warning on stderr: %q", r.stderr)
		}
	})
	t.Run("plaintext to a TLS listener", func(t *testing.T) {
		r := execKbatch(t, nil, "topics", "-b", addr, "--dial-timeout", "5s")
		checkOneLine(t, r, exitFailure, []string{"cannot reach", "TLS"})
	})
	t.Run("TLS to a plaintext listener", func(t *testing.T) {
		plain := fakeWithTopic(t, nil)
		r := execKbatch(t, nil, "topics", "-b", plain, "--tls-ca", ca, "--dial-timeout", "5s")
		checkOneLine(t, r, exitFailure, []string{"cannot reach", "TLS"})
	})
}

func TestSASL(t *testing.T) {
	const (
		plainPW  = "plain-Pa55word!"
		scram256 = "scram256-Pa55word!"
		scram512 = "scram512-Pa55word!"
	)
	addr := fakeWithTopic(t,
		[]kgo.Opt{kgo.SASL(plain.Auth{User: "alice", Pass: plainPW}.AsMechanism())},
		kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "alice", plainPW),
		kfake.Superuser("SCRAM-SHA-256", "bob", scram256),
		kfake.Superuser("SCRAM-SHA-512", "carol", scram512),
	)
	dir := t.TempDir()
	writeFile(t, dir, "carol.pw", scram512+"\n", 0o600)
	cfg := writeFile(t, dir, "sasl.toml", `
default_cluster = "lab"
[clusters.lab]
brokers = ["`+addr+`"]
[clusters.lab.sasl]
mechanism = "SCRAM-SHA-512"
username = "carol"
password_file = "carol.pw"
`, 0o600)

	ok := []struct {
		label string
		env   []string
		args  []string
	}{
		{"PLAIN via KBATCH_SASL_PASSWORD", []string{"KBATCH_SASL_PASSWORD=" + plainPW},
			[]string{"-b", addr, "--sasl-mechanism", "PLAIN", "--sasl-user", "alice"}},
		{"SCRAM-SHA-256 via --sasl-password-env", []string{"BOB_PW=" + scram256},
			[]string{"-b", addr, "--sasl-mechanism", "scram-sha-256", "--sasl-user", "bob", "--sasl-password-env", "BOB_PW"}},
		{"SCRAM-SHA-512 via a profile's password_file", nil, []string{"--config", cfg}},
		{"env settings", []string{"KBATCH_BROKERS=" + addr, "KBATCH_SASL_MECHANISM=SCRAM-SHA-256", "KBATCH_SASL_USER=bob", "KBATCH_SASL_PASSWORD=" + scram256}, nil},
	}
	for _, tc := range ok {
		t.Run(tc.label, func(t *testing.T) {
			infos := topicsJSON(t, execKbatch(t, tc.env, append([]string{"topics", "--json"}, tc.args...)...))
			if len(infos) != 1 || infos[0].PartitionCount != 2 {
				t.Fatalf("topics %+v", infos)
			}
		})
	}

	bad := []struct {
		label  string
		env    []string
		args   []string
		secret string
	}{
		{"wrong PLAIN password", []string{"KBATCH_SASL_PASSWORD=wrong-Secret-1"},
			[]string{"-b", addr, "--sasl-mechanism", "PLAIN", "--sasl-user", "alice"}, "wrong-Secret-1"},
		{"wrong SCRAM-SHA-256 password", []string{"KBATCH_SASL_PASSWORD=wrong-Secret-2"},
			[]string{"-b", addr, "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-user", "bob"}, "wrong-Secret-2"},
		{"wrong SCRAM-SHA-512 password", []string{"KBATCH_SASL_PASSWORD=wrong-Secret-3"},
			[]string{"--config", cfg}, "wrong-Secret-3"},
		{"unknown user", []string{"KBATCH_SASL_PASSWORD=" + scram512},
			[]string{"-b", addr, "--sasl-mechanism", "SCRAM-SHA-512", "--sasl-user", "mallory"}, scram512},
		{"no SASL against a SASL cluster", nil, []string{"-b", addr}, ""},
	}
	for _, tc := range bad {
		t.Run(tc.label, func(t *testing.T) {
			r := execKbatch(t, tc.env, append([]string{"topics", "--dial-timeout", "5s"}, tc.args...)...)
			secrets := []string{plainPW, scram256, scram512}
			if tc.secret != "" {
				secrets = append(secrets, tc.secret)
			}
			checkOneLine(t, r, exitFailure, []string{"cannot reach", "SASL"}, secrets...)
		})
	}

	t.Run("no password and no terminal", func(t *testing.T) {
		r := execKbatch(t, nil, "topics", "-b", addr, "--sasl-mechanism", "PLAIN", "--sasl-user", "alice")
		checkOneLine(t, r, exitUsage, []string{"needs a password", "--sasl-password-env"})
	})
}

// TestSCRAMPasswordSASLprepChanges: Kafka (its clients, its tools, kfake)
// derives SCRAM credentials from the password's UTF-8 bytes as typed,
// without SASLprep, so a right password that SASLprep changes ("e" +
// U+0301 becomes "é"; U+00A0 becomes a space) must still log in: kbatch
// tries the SASLprep form, then the bytes as typed.
func TestSCRAMPasswordSASLprepChanges(t *testing.T) {
	const (
		decomposed = "cafe\u0301-Pa55"
		nbsp       = "two\u00a0words-Pa55"
	)
	addr := fakeWithTopic(t,
		[]kgo.Opt{kgo.SASL(plain.Auth{User: "admin", Pass: "admin-pw"}.AsMechanism())},
		kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "admin", "admin-pw"),
		kfake.Superuser("SCRAM-SHA-256", "dave", decomposed),
		kfake.Superuser("SCRAM-SHA-512", "erin", nbsp),
	)
	for _, c := range []struct{ mech, user, pw string }{{"SCRAM-SHA-256", "dave", decomposed}, {"SCRAM-SHA-512", "erin", nbsp}} {
		t.Run(c.user, func(t *testing.T) {
			topicsJSON(t, execKbatch(t, []string{"KBATCH_SASL_PASSWORD=" + c.pw}, "topics", "--json", "-b", addr, "--sasl-mechanism", c.mech, "--sasl-user", c.user))
			r := execKbatch(t, []string{"KBATCH_SASL_PASSWORD=" + c.pw + "x"}, "topics", "--dial-timeout", "5s", "-b", addr, "--sasl-mechanism", c.mech, "--sasl-user", c.user)
			// kfake hangs up on a failed login instead of answering.
			checkOneLine(t, r, exitFailure, []string{"wrong SASL user name or password for " + c.user}, c.pw)
		})
	}
}
