package kafka

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// A connection the dialer authenticated before sarama got it serves
// sarama's requests, over TLS too (the server name taken from the
// address); a refused login is explained in one line.
func TestSASLDialerAuthenticatesSaramasConnections(t *testing.T) {
	for _, withTLS := range []bool{false, true} {
		name := "plaintext"
		if withTLS {
			name = "tls"
		}
		t.Run(name, func(t *testing.T) {
			opts := []kfake.Opt{kfake.SeedTopics(2, "dialed"), kfake.EnableSASL(), kfake.Superuser("PLAIN", "alice", "alice-pw")}
			var clientTLS *tls.Config
			if withTLS {
				var srv tls.Certificate
				srv, clientTLS = selfSignedFor(t, "127.0.0.1")
				opts = append(opts, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{srv}, MinVersion: tls.VersionTLS12}))
			}
			fake, err := kfake.NewCluster(opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			connect := func(pass string) (*Client, error) {
				cc := ClientConfig{Brokers: fake.ListenAddrs(), TLS: clientTLS, SASL: &SASL{Mechanism: "PLAIN", User: "alice"}}
				conf := cc.saramaConfig()
				conf.Net.SASL.Enable, conf.Net.TLS.Enable = false, false
				conf.Net.Proxy.Enable = true
				conf.Net.Proxy.Dialer = &saslDialer{conf: conf, tls: clientTLS, mechanism: func() (sasl.Mechanism, error) {
					return plain.Auth{User: "alice", Pass: pass}.AsMechanism(), nil
				}}
				return dial(cc, conf)
			}
			c, err := connect("alice-pw")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			parts, err := TopicPartitions(c, []string{"dialed"})
			if err != nil || len(parts) != 2 {
				t.Fatalf("partitions: %v %v, want 2", parts, err)
			}
			if _, err := ListBounds(c, parts); err != nil {
				t.Fatal(err)
			}

			// kfake hangs up on a refused login where Kafka answers
			// SASL_AUTHENTICATION_FAILED: either way, one line names
			// the user and mechanism.
			_, err = connect("wrong")
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "alice (PLAIN)") {
				t.Errorf("wrong password: %v; want the refused login explained", err)
			}
		})
	}
}

// selfSignedFor is a server certificate for ip and a client TLS
// configuration that trusts it and names no server.
func selfSignedFor(t *testing.T, ip string) (tls.Certificate, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dialed"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP(ip)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}
