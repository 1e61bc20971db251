package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/youmark/pkcs8"

	"github.com/kbatch-dev/kbatch/internal/fixtures"
)

func TestMerge(t *testing.T) {
	flags := Connection{SASL: SASL{User: "flaguser", PasswordFile: "/flag.pw"}, TLS: TLS{Enabled: ptr(false)}}
	env := Connection{Brokers: []string{"env:1"}, KafkaVersion: "3.0.0", SASL: SASL{Mechanism: "plain", Password: "envpw"}}
	profile := Connection{Name: "prod", Brokers: []string{"p:1"}, KafkaVersion: "2.8.0", DialTimeout: time.Second,
		TLS:  TLS{Enabled: ptr(true), CAFile: "/ca.pem", InsecureSkipVerify: ptr(true)},
		SASL: SASL{Mechanism: "SCRAM-SHA-512", User: "puser", PasswordEnv: "PW"}}
	got := Merge(flags, env, profile)
	want := Connection{Name: "prod", Brokers: []string{"env:1"}, KafkaVersion: "3.0.0", DialTimeout: time.Second,
		TLS:  TLS{Enabled: ptr(false), CAFile: "/ca.pem", InsecureSkipVerify: ptr(true)},
		SASL: SASL{Mechanism: "PLAIN", User: "flaguser", PasswordFile: "/flag.pw"}}
	if fmt.Sprintf("%+v", derefTLS(got)) != fmt.Sprintf("%+v", derefTLS(want)) {
		t.Errorf("got  %+v\nwant %+v", derefTLS(got), derefTLS(want))
	}
	if got.TLS.On() || got.TLS.Insecure() {
		t.Error("--tls=false must win over the profile's TLS")
	}
	// The password source moves as a whole: env's Password beats the
	// profile's PasswordEnv when no flag gives one.
	got = Merge(Connection{}, env, profile)
	if got.SASL.Password != "envpw" || got.SASL.PasswordEnv != "" {
		t.Errorf("password source %+v", got.SASL)
	}
}

func derefTLS(c Connection) string {
	b := func(p *bool) string {
		if p == nil {
			return "nil"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("%s %v %s %v %s tls{%s %s %s %s %s %s} sasl{%s %s %q %s %s}", c.Name, c.Brokers, c.KafkaVersion, c.DialTimeout, "",
		b(c.TLS.Enabled), c.TLS.CAFile, c.TLS.CertFile, c.TLS.KeyFile, c.TLS.ServerName, b(c.TLS.InsecureSkipVerify),
		c.SASL.Mechanism, c.SASL.User, string(c.SASL.Password), c.SASL.PasswordEnv, c.SASL.PasswordFile)
}

func TestCheck(t *testing.T) {
	ok := Connection{Brokers: []string{"h:1"}}
	tests := []struct {
		label string
		c     Connection
		want  string
	}{
		{"fine", ok, ""},
		{"no brokers", Connection{}, "no brokers"},
		{"bad broker", Connection{Brokers: []string{"h"}}, "invalid broker address"},
		{"bad port", Connection{Brokers: []string{"h:99999x"}}, "invalid broker address"},
		{"ipv6", Connection{Brokers: []string{"[::1]:9092"}}, ""},
		{"sasl needs user", Connection{Brokers: ok.Brokers, SASL: SASL{Mechanism: "PLAIN"}}, "needs a user name"},
		{"unknown mechanism", Connection{Brokers: ok.Brokers, SASL: SASL{Mechanism: "KERBEROS", User: "u"}}, "unknown SASL mechanism"},
		{"user without mechanism", Connection{Brokers: ok.Brokers, SASL: SASL{User: "u"}}, "without a mechanism"},
		{"half a client cert", Connection{Brokers: ok.Brokers, TLS: TLS{KeyFile: "k"}}, "--tls-cert"},
	}
	for _, tc := range tests {
		err := tc.c.Check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: error %v, want %q", tc.label, err, tc.want)
		}
	}
}

func TestClusterLookup(t *testing.T) {
	f := &File{Path: "/c.toml", Clusters: map[string]Connection{"b": {}, "a": {}}}
	if _, err := f.Cluster("nope"); err == nil || err.Error() != `unknown cluster "nope": /c.toml defines a, b` {
		t.Errorf("%v", err)
	}
	if _, err := (&File{Path: "/c.toml"}).Cluster("x"); err == nil || err.Error() != `unknown cluster "x": /c.toml defines no [clusters.NAME]` {
		t.Errorf("%v", err)
	}
	if _, err := (&File{missing: "/home/u/.config/kbatch/config.toml"}).Cluster("x"); err == nil ||
		err.Error() != `unknown cluster "x": there is no config file /home/u/.config/kbatch/config.toml (pass --config FILE)` {
		t.Errorf("%v", err)
	}
}

func TestResolvePassword(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"PW": "from-env"}
	getenv := func(k string) string { return env[k] }
	write := func(name, content string, mode os.FileMode) string {
		return fixtures.WriteFile(t, filepath.Join(dir, name), content, mode)
	}
	private := write("private.pw", "from-file\r\nsecond line\n", 0o600)
	open := write("open.pw", "open-secret", 0o644)
	empty := write("empty.pw", "\n", 0o600)
	tests := []struct {
		label   string
		s       SASL
		want    Secret
		warn    bool
		wantErr string
	}{
		{"inline", SASL{Password: "inline"}, "inline", false, ""},
		{"env", SASL{PasswordEnv: "PW"}, "from-env", false, ""},
		{"env unset", SASL{PasswordEnv: "NOPE"}, "", false, "NOPE (--sasl-password-env, password_env) is not set"},
		{"file first line", SASL{PasswordFile: private}, "from-file", false, ""},
		{"open file warns", SASL{PasswordFile: open}, "open-secret", true, ""},
		{"empty file", SASL{PasswordFile: empty}, "", false, "is empty"},
		{"missing file", SASL{PasswordFile: filepath.Join(dir, "none")}, "", false, "does not exist"},
		{"none", SASL{}, "", false, ErrNoPassword.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			got, warnings, err := tc.s.ResolvePassword(getenv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v", string(got), err)
			}
			if (len(warnings) > 0) != tc.warn {
				t.Errorf("warnings %q", warnings)
			}
			for _, w := range warnings {
				if strings.Contains(w, string(got)) {
					t.Error("warning shows the password")
				}
			}
		})
	}
}

func TestSecretNeverFormats(t *testing.T) {
	s := Secret("hunter2")
	c := Connection{SASL: SASL{Password: s}}
	outs := []string{
		fmt.Sprint(s), fmt.Sprintf("%v %s %q %x %d %+v %#v", s, s, s, s, s, s, s),
		fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c),
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, string(b))
	for _, o := range outs {
		if strings.Contains(o, "hunter2") {
			t.Errorf("secret leaked: %s", o)
		}
	}
	if string(s) != "hunter2" {
		t.Error("string conversion must still give the password")
	}
}

func TestTLSConfig(t *testing.T) {
	dir := t.TempDir()
	key, der := selfSigned(t)
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath := filepath.Join(dir, "cert.pem")
	keyPath := filepath.Join(dir, "key.pem")
	junk := filepath.Join(dir, "junk.pem")
	_ = os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	_ = os.WriteFile(junk, []byte("SECRET-KEY-MATERIAL not pem"), 0o600)

	if c, err := (TLS{}).TLSConfig(); c != nil || err != nil {
		t.Errorf("off: %v %v", c, err)
	}
	c, err := TLS{CAFile: certPath, CertFile: certPath, KeyFile: keyPath, ServerName: "k.test"}.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	if c.RootCAs == nil || len(c.Certificates) != 1 || c.ServerName != "k.test" || c.InsecureSkipVerify || c.MinVersion == 0 {
		t.Errorf("config %+v", c)
	}
	c, err = TLS{InsecureSkipVerify: ptr(true)}.TLSConfig()
	if err != nil || !c.InsecureSkipVerify {
		t.Errorf("insecure: %v %v", c, err)
	}
	for _, tc := range []struct {
		t    TLS
		want string
	}{
		{TLS{CAFile: junk}, "holds no PEM certificate"},
		{TLS{CAFile: filepath.Join(dir, "none.pem")}, "does not exist"},
		{TLS{CertFile: certPath, KeyFile: junk}, "TLS certificate " + certPath + " with key " + junk},
		{TLS{CertFile: certPath}, "go together"},
	} {
		_, err := tc.t.TLSConfig()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.t, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET-KEY-MATERIAL") {
			t.Error("error quotes the key file")
		}
	}
}

func TestRunSecretCommand(t *testing.T) {
	got, err := RunSecretCommand("printf 'first-Line\\nsecond\\n'", "test secret")
	if err != nil || string(got) != "first-Line" {
		t.Errorf("got %q, %v", string(got), err)
	}
	cases := []struct{ cmd, want string }{
		{"echo leaked-Secret-1 >&2; echo leaked-Secret-2; exit 4", "the command failed (exit status 4)"},
		{"true", "the command printed nothing"},
		{"head -c 1100000 /dev/zero | tr '\\0' a", "printed more than 1 MiB"},
	}
	for _, c := range cases {
		_, err := RunSecretCommand(c.cmd, "test secret")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "test secret: ") {
			t.Errorf("%s: %v, want %q", c.cmd, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "leaked-Secret") {
			t.Errorf("%s: the error shows the command's output: %v", c.cmd, err)
		}
	}
}

func TestSecretSourceResolve(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "s")
	if err := os.WriteFile(f, []byte("from-File\r\nrest"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string { return map[string]string{"TOKEN": "from-Env"}[k] }
	for _, c := range []struct {
		src  SecretSource
		want string
		warn bool
	}{
		{SecretSource{Env: "TOKEN"}, "from-Env", false},
		{SecretSource{File: f}, "from-File", true},
		{SecretSource{Command: "echo from-Command"}, "from-Command", false},
	} {
		got, warnings, err := c.src.Resolve("token", env)
		if err != nil || string(got) != c.want || (len(warnings) > 0) != c.warn {
			t.Errorf("%+v: %q %v %v", c.src, string(got), warnings, err)
		}
	}
	if _, _, err := (SecretSource{Env: "MISSING"}).Resolve("token", env); err == nil || !strings.Contains(err.Error(), "MISSING") {
		t.Errorf("missing variable: %v", err)
	}
	if _, _, err := (SecretSource{Env: "hunter2-pw"}).Resolve("token", env); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a variable name that looks like a secret is shown: %v", err)
	}
}

// TestEncryptedClientKeys decrypts client keys encrypted as PKCS#8 (PBES2)
// and as legacy PEM with the passphrase from each source, and refuses a
// wrong or missing passphrase with one line naming the key file.
func TestEncryptedClientKeys(t *testing.T) {
	dir := t.TempDir()
	key, der := selfSigned(t)
	cert := filepath.Join(dir, "client.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	const pass = "key-Passphrase-42"
	p8, err := pkcs8.MarshalPrivateKey(key, []byte(pass), nil)
	if err != nil {
		t.Fatal(err)
	}
	encP8 := filepath.Join(dir, "p8.pem")
	if err := os.WriteFile(encP8, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: p8}), 0o600); err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalECPrivateKey(key)
	//nolint:staticcheck // writing the legacy format the reader must understand
	legacyBlock, err := x509.EncryptPEMBlock(rand.Reader, "EC PRIVATE KEY", ecDER, []byte(pass), x509.PEMCipherAES256)
	if err != nil {
		t.Fatal(err)
	}
	legacy := filepath.Join(dir, "legacy.pem")
	if err := os.WriteFile(legacy, pem.EncodeToMemory(legacyBlock), 0o600); err != nil {
		t.Fatal(err)
	}
	passFile := filepath.Join(dir, "pass")
	if err := os.WriteFile(passFile, []byte(pass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string { return map[string]string{"KEY_PASS": pass, "WRONG": pass + "x"}[k] }
	for _, keyFile := range []string{encP8, legacy} {
		for _, src := range []SecretSource{{Env: "KEY_PASS"}, {File: passFile}, {Command: "cat " + passFile}} {
			c, err := TLS{CertFile: cert, KeyFile: keyFile, KeyPassword: src}.TLSConfigEnv(env)
			if err != nil || len(c.Certificates) != 1 {
				t.Errorf("%s with %+v: %v", filepath.Base(keyFile), src, err)
			}
		}
		_, err := TLS{CertFile: cert, KeyFile: keyFile, KeyPassword: SecretSource{Env: "WRONG"}}.TLSConfigEnv(env)
		if err == nil || !strings.Contains(err.Error(), keyFile+" cannot be decrypted: wrong passphrase") || strings.Contains(err.Error(), pass) {
			t.Errorf("%s, wrong passphrase: %v", filepath.Base(keyFile), err)
		}
		_, err = TLS{CertFile: cert, KeyFile: keyFile}.TLSConfigEnv(env)
		if err == nil || !strings.Contains(err.Error(), "is encrypted: give its passphrase") {
			t.Errorf("%s, no passphrase: %v", filepath.Base(keyFile), err)
		}
	}
	// Legacy PEM has no integrity check, and a wrong passphrase passes its
	// padding check about once in 256 tries: the garbage it yields must
	// still be reported as a wrong passphrase, not as an unparsable key.
	for i := 0; i < 600; i++ {
		wrong := func(string) string { return fmt.Sprintf("wrong-%d", i) }
		_, err := TLS{CertFile: cert, KeyFile: legacy, KeyPassword: SecretSource{Env: "ANY"}}.TLSConfigEnv(wrong)
		if err == nil || !strings.Contains(err.Error(), "cannot be decrypted: wrong passphrase") {
			t.Fatalf("legacy key, wrong passphrase %d: %v", i, err)
		}
	}
	plainDER, _ := x509.MarshalPKCS8PrivateKey(key)
	plain := filepath.Join(dir, "plain.pem")
	if err := os.WriteFile(plain, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: plainDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (TLS{CertFile: cert, KeyFile: plain}).TLSConfigEnv(env); err != nil {
		t.Errorf("plain key: %v", err)
	}
	if _, err := (TLS{CertFile: cert, KeyFile: plain, KeyPassword: SecretSource{Env: "KEY_PASS"}}).TLSConfigEnv(env); err == nil || !strings.Contains(err.Error(), "is not encrypted") {
		t.Errorf("plain key with a passphrase: %v", err)
	}
}

func TestParseMechanismProfiles(t *testing.T) {
	f, err := Parse([]byte(`
[clusters.o]
brokers = ["h:1"]
sasl = { mechanism = "oauthbearer", token_endpoint = "https://idp/token", client_id = "c", client_secret_file = "cs", scope = "a b", extensions = { traceId = "t1" }, token_endpoint_ca = "idp-ca.pem" }
[clusters.m]
brokers = ["h:1"]
sasl = { mechanism = "aws_msk_iam", aws_region = "eu-west-1", aws_profile = "p" }
[clusters.k]
brokers = ["h:1"]
sasl = { mechanism = "GSSAPI", username = "u", kerberos_realm = "R", kerberos_keytab = "u.keytab", kerberos_disable_fast = true }
[clusters.t]
brokers = ["h:1"]
tls = { cert_file = "c.pem", key_file = "k.pem", key_password_command = "pass show k" }
`), "/etc/kbatch/config.toml")
	if err != nil {
		t.Fatal(err)
	}
	o := f.Clusters["o"].SASL
	if o.Mechanism != "OAUTHBEARER" || o.OAuth.ClientSecret.File != "/etc/kbatch/cs" || o.OAuth.Extensions["traceId"] != "t1" || o.OAuth.Scope != "a b" || o.OAuth.TokenEndpointCA != "/etc/kbatch/idp-ca.pem" {
		t.Errorf("oauth %+v", o)
	}
	if m := f.Clusters["m"].SASL; m.Mechanism != "AWS_MSK_IAM" || m.AWS != (AWS{Region: "eu-west-1", Profile: "p"}) {
		t.Errorf("msk %+v", m)
	}
	k := f.Clusters["k"].SASL
	if k.Kerberos.Keytab != "/etc/kbatch/u.keytab" || k.Kerberos.DisableFAST == nil || !*k.Kerberos.DisableFAST || k.NeedsPassword() {
		t.Errorf("kerberos %+v", k)
	}
	if tl := f.Clusters["t"].TLS; tl.KeyPassword.Command != "pass show k" {
		t.Errorf("tls %+v", tl)
	}
	// Flags may change the user or mechanism; the mechanism's settings
	// come whole from the profile.
	merged := Merge(Connection{SASL: SASL{User: "other"}}, f.Clusters["k"])
	if merged.SASL.User != "other" || merged.SASL.Kerberos.Realm != "R" || merged.Check() != nil {
		t.Errorf("merged %+v: %v", merged.SASL, merged.Check())
	}
	if err := Merge(Connection{SASL: SASL{Mechanism: "PLAIN"}}, f.Clusters["o"]).Check(); err == nil || !strings.Contains(err.Error(), "are for mechanism OAUTHBEARER, not PLAIN") {
		t.Errorf("PLAIN over an OAUTHBEARER profile: %v", err)
	}
}

// selfSigned is a new P-256 key and a certificate for it, signed by
// itself, valid for an hour either side of now (CN "client"; a CA, so it
// also serves as its own trust anchor).
func selfSigned(t *testing.T) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "client"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}
