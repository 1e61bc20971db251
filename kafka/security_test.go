package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/IBM/sarama"
)

// TestSCRAMSHA256Vector runs the exchange of RFC 7677 §3 with its fixed
// nonce.
func TestSCRAMSHA256Vector(t *testing.T) {
	c := scramClientFor("scram-sha-256", false)().(*scramClient)
	if err := c.Begin("user", "pencil", ""); err != nil {
		t.Fatal(err)
	}
	c.nonce = "rOprNGfwEbeRWgbNEkqO"
	steps := []struct{ in, want string }{
		{"", "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"},
		{"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
			"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="},
		{"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=", ""},
	}
	for i, s := range steps {
		if c.Done() {
			t.Fatalf("done before step %d", i)
		}
		got, err := c.Step(s.in)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got != s.want {
			t.Fatalf("step %d: got %q, want %q", i, got, s.want)
		}
	}
	if !c.Done() {
		t.Fatal("not done after the server's final message")
	}
}

func TestSCRAMRefusesBadServers(t *testing.T) {
	const first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	tests := []struct {
		label       string
		first, last string
		want        string
	}{
		{"foreign nonce", "r=someoneelse,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "", "nonce"},
		{"same nonce", "r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", "", "nonce"},
		{"bad salt", "r=rOprNGfwEbeRWgbNEkqOx,s=!!,i=4096", "", "salt"},
		{"huge iterations", "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=999999999", "", "iteration"},
		{"server error", "e=invalid-proof", "", "server refused"},
		{"wrong signature", first, "v=AAAA", "signature"},
		{"final error", first, "e=other-error", "server refused"},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			c := scramClientFor("SCRAM-SHA-256", false)().(*scramClient)
			if err := c.Begin("user", "pencil", ""); err != nil {
				t.Fatal(err)
			}
			c.nonce = "rOprNGfwEbeRWgbNEkqO"
			if _, err := c.Step(""); err != nil {
				t.Fatal(err)
			}
			_, err := c.Step(tc.first)
			if err == nil && tc.last != "" {
				_, err = c.Step(tc.last)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "pencil") {
				t.Fatal("error shows the password")
			}
		})
	}
}

func TestSCRAMNameEscapingAndMechanisms(t *testing.T) {
	c := scramClientFor("SCRAM-SHA-512", false)().(*scramClient)
	if err := c.Begin("a=b,c", "pw", "admin"); err != nil {
		t.Fatal(err)
	}
	first, _ := c.Step("")
	if !strings.HasPrefix(first, "n,a=admin,n=a=3Db=2Cc,r=") {
		t.Errorf("client-first %q", first)
	}
	if scramClientFor("PLAIN", false) != nil {
		t.Error("PLAIN has no SCRAM client")
	}
}

// TestSCRAMAdapterOnTheLibrary: what the adapter around xdg-go/scram
// promises beyond the RFC vector. The password is SASLprepped (U+00A0,
// a non-ASCII space, is mapped to a space, so two spellings give one
// proof); a server message extension (m=) is refused; a server error is
// kept to its first line; and Done stays false after a
// signature that does not match.
func TestSCRAMAdapterOnTheLibrary(t *testing.T) {
	const first = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
	start := func(password string) *scramClient {
		c := scramClientFor("SCRAM-SHA-256", false)().(*scramClient)
		if err := c.Begin("user", password, ""); err != nil {
			t.Fatal(err)
		}
		c.nonce = "rOprNGfwEbeRWgbNEkqO"
		if _, err := c.Step(""); err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, err := start("pen cil").Step(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := start("pen\u00a0cil").Step(first)
	if err != nil || a != b {
		t.Fatalf("SASLprep: proofs differ (%q vs %q, %v)", a, b, err)
	}
	if _, err := start("pencil").Step("m=ext," + first); err == nil {
		t.Fatal("a mandatory extension was accepted")
	}
	// The server's text is kept as it came, on one line: it is escaped
	// once, where it reaches the terminal (TestHostileBrokerStrings).
	_, err = start("pencil").Step("e=\x1b]0;owned\x07\nsecond line")
	if err == nil || !strings.Contains(err.Error(), "server refused: \x1b]0;owned\x07") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("server error %q, want its first line as it came", err)
	}
	c := start("pencil")
	if _, err := c.Step(first); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step("v=AAAA"); err == nil || c.Done() {
		t.Fatalf("bad signature: err %v, done %v", err, c.Done())
	}
}

func TestDescribeSecurityError(t *testing.T) {
	out := func(e error) error { return sarama.Wrap(sarama.ErrOutOfBrokers, e) }
	withTLS := ClientConfig{TLS: &tls.Config{}}
	withSASL := ClientConfig{SASL: &SASL{Mechanism: "SCRAM-SHA-256", User: "bob", Password: "hunter2"}}
	tests := []struct {
		label string
		cc    ClientConfig
		err   error
		want  string // "" means not a security error
	}{
		{"unknown CA", withTLS, out(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), "certificate was refused: x509: certificate signed by unknown authority"},
		{"bare hostname error", withTLS, out(x509.HostnameError{Certificate: &x509.Certificate{}, Host: "b.test"}), "certificate was refused"},
		{"not TLS", withTLS, out(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), "does not speak TLS"},
		{"sasl failed", withSASL, out(fmt.Errorf("x: %w", sarama.ErrSASLAuthenticationFailed)), "SASL authentication failed for bob (SCRAM-SHA-256)"},
		{"mechanism", withSASL, out(sarama.ErrUnsupportedSASLMechanism), "does not enable SASL mechanism bob (SCRAM-SHA-256)"},
		{"eof with SASL", withSASL, out(io.EOF), "wrong SASL user name or password for bob"},
		{"eof plain", ClientConfig{}, out(io.EOF), "expect TLS (--tls) or SASL (--sasl-mechanism)?"},
		{"eof TLS", withTLS, out(io.EOF), "is the listener plaintext (then drop --tls)"},
		{"eof TLS and SASL", ClientConfig{TLS: withTLS.TLS, SASL: withSASL.SASL}, out(io.ErrUnexpectedEOF), "password for bob (SCRAM-SHA-256), a mechanism the broker does not enable, or a plaintext listener"},
		{"other", ClientConfig{}, out(errors.New("dial tcp: connection refused")), ""},
	}
	for _, tc := range tests {
		t.Run(tc.label, func(t *testing.T) {
			got := describeSecurityError(tc.cc, tc.err)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if strings.Contains(got, "hunter2") {
				t.Error("message shows the password")
			}
		})
	}
}
