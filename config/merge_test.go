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
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
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
