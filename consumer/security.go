package consumer

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"syscall"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/record"
)

// SCRAMClientFor returns the SCRAM conversation generator for mechanism
// ("SCRAM-SHA-256" or "SCRAM-SHA-512", any case), for SASL.SCRAMClient; nil
// for any other mechanism.
func SCRAMClientFor(mechanism string) func() sarama.SCRAMClient {
	switch strings.ToUpper(mechanism) {
	case "SCRAM-SHA-256":
		return func() sarama.SCRAMClient { return &scramClient{newHash: sha256.New} }
	case "SCRAM-SHA-512":
		return func() sarama.SCRAMClient { return &scramClient{newHash: sha512.New} }
	}
	return nil
}

// scramMaxIterations refuses servers that ask for absurd PBKDF2 work (a
// hostile broker could otherwise pin a CPU); Kafka allows at most 16384.
const scramMaxIterations = 1 << 20

// scramClient is one SCRAM conversation (RFC 5802, without channel
// binding), as sarama drives it: Begin, then Step("") for the client-first
// message, Step(server-first) for the client-final message, and
// Step(server-final), which checks the server's signature. It is used by
// one goroutine and never reused. The password is kept only until the
// salted password is derived, and never appears in an error.
type scramClient struct {
	newHash func() hash.Hash

	user, password, authzID string
	nonce                   string
	clientFirstBare         string
	serverSignature         []byte
	step                    int
	done                    bool
}

// Begin stores the credentials and draws the client nonce.
func (c *scramClient) Begin(user, password, authzID string) error {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("scram: drawing a nonce: %w", err)
	}
	c.user, c.password, c.authzID = user, password, authzID
	c.nonce = base64.RawStdEncoding.EncodeToString(b[:])
	return nil
}

// Step answers the server's challenge; see the type comment for the order.
func (c *scramClient) Step(challenge string) (string, error) {
	c.step++
	switch c.step {
	case 1:
		c.clientFirstBare = "n=" + scramName(c.user) + ",r=" + c.nonce
		return c.gs2Header() + c.clientFirstBare, nil
	case 2:
		return c.clientFinal(challenge)
	case 3:
		c.done = true
		return "", c.checkServerFinal(challenge)
	}
	return "", errors.New("scram: conversation already finished")
}

// Done reports whether the server's final message was checked.
func (c *scramClient) Done() bool { return c.done }

func (c *scramClient) gs2Header() string {
	if c.authzID == "" {
		return "n,,"
	}
	return "n,a=" + scramName(c.authzID) + ","
}

func (c *scramClient) clientFinal(serverFirst string) (string, error) {
	attrs := scramAttrs(serverFirst)
	if e, ok := attrs["e"]; ok {
		return "", fmt.Errorf("scram: server refused: %s", record.String(e))
	}
	nonce, salt64, iter := attrs["r"], attrs["s"], attrs["i"]
	if !strings.HasPrefix(nonce, c.nonce) || len(nonce) == len(c.nonce) {
		return "", errors.New("scram: server nonce does not extend the client nonce")
	}
	salt, err := base64.StdEncoding.DecodeString(salt64)
	if err != nil || len(salt) == 0 {
		return "", errors.New("scram: server sent an invalid salt")
	}
	n, err := strconv.Atoi(iter)
	if err != nil || n < 1 || n > scramMaxIterations {
		return "", fmt.Errorf("scram: server asked for an invalid iteration count %q", iter)
	}
	salted, err := pbkdf2.Key(c.newHash, c.password, salt, n, c.newHash().Size())
	c.password = ""
	if err != nil {
		return "", fmt.Errorf("scram: deriving the key: %w", err)
	}
	clientKey := c.hmac(salted, []byte("Client Key"))
	h := c.newHash()
	h.Write(clientKey)
	storedKey := h.Sum(nil)
	withoutProof := "c=" + base64.StdEncoding.EncodeToString([]byte(c.gs2Header())) + ",r=" + nonce
	authMessage := []byte(c.clientFirstBare + "," + serverFirst + "," + withoutProof)
	proof := c.hmac(storedKey, authMessage)
	for i := range proof {
		proof[i] ^= clientKey[i]
	}
	c.serverSignature = c.hmac(c.hmac(salted, []byte("Server Key")), authMessage)
	return withoutProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
}

func (c *scramClient) checkServerFinal(serverFinal string) error {
	attrs := scramAttrs(serverFinal)
	if e, ok := attrs["e"]; ok {
		return fmt.Errorf("scram: server refused: %s", record.String(e))
	}
	v, err := base64.StdEncoding.DecodeString(attrs["v"])
	if err != nil || subtle.ConstantTimeCompare(v, c.serverSignature) != 1 {
		return errors.New("scram: the server's signature does not match (is it the real broker?)")
	}
	return nil
}

func (c *scramClient) hmac(key, msg []byte) []byte {
	m := hmac.New(c.newHash, key)
	m.Write(msg)
	return m.Sum(nil)
}

// scramName escapes a user name for a SCRAM message (RFC 5802 §5.1).
func scramName(s string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s)
}

// scramAttrs splits "k=v,k=v" (values may contain '=').
func scramAttrs(msg string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(msg, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && len(k) == 1 {
			if _, seen := out[k]; !seen {
				out[k] = v
			}
		}
	}
	return out
}

// describeSecurityError explains a failure to reach the cluster that comes
// from TLS or SASL, naming the setting to check and, for SASL, the user and
// mechanism tried; "" when err is something else. It matches typed errors
// (x509, tls, sarama KErrors, EOF), so diagnose in client.go can try it
// before its own string checks. It never includes the password: sarama's
// errors do not carry it, and only the user name and mechanism are added.
func describeSecurityError(cc ClientConfig, err error) string {
	var (
		recordHdr tls.RecordHeaderError
		alert     tls.AlertError
		saslUser  string
	)
	if cc.SASL != nil {
		saslUser = fmt.Sprintf("%s (%s)", cc.SASL.User, strings.ToUpper(cc.SASL.Mechanism))
	}
	certMsg, certErr := certificateError(err)
	switch {
	case certErr:
		return "TLS: the broker's certificate was refused: " + certMsg +
			" (trust its CA with --tls-ca or ca_file; check --tls-server-name or server_name)"
	case errors.As(err, &recordHdr):
		return "TLS handshake failed: the listener does not speak TLS (drop --tls, or use the broker's TLS port)"
	case errors.As(err, &alert):
		return "TLS handshake refused by the broker: " + alert.Error() + " (does it want a client certificate, --tls-cert and --tls-key?)"
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed):
		return "SASL authentication failed for " + saslUser + ": wrong user name or password?"
	case errors.Is(err, sarama.ErrUnsupportedSASLMechanism), errors.Is(err, sarama.ErrIllegalSASLState):
		return "the broker does not enable SASL mechanism " + saslUser + " (try another --sasl-mechanism)"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the broker closed the connection: " + closedHint(cc, saslUser)
	}
	return ""
}

// closedHint lists the likely reasons a broker hangs up during connection
// set-up, given what kbatch tried.
func closedHint(cc ClientConfig, saslUser string) string {
	switch {
	case cc.TLS == nil && cc.SASL == nil:
		return "does the listener expect TLS (--tls) or SASL (--sasl-mechanism)?"
	case cc.TLS != nil && cc.SASL == nil:
		return "is the listener plaintext (then drop --tls), or does it expect SASL (--sasl-mechanism)?"
	case cc.TLS == nil:
		return "wrong SASL user name or password for " + saslUser + ", a mechanism the broker does not enable, or a listener that expects TLS (--tls)?"
	}
	return "wrong SASL user name or password for " + saslUser + ", a mechanism the broker does not enable, or a plaintext listener (then drop --tls)?"
}

// certificateError returns the message of a certificate check failure
// inside err, if there is one.
func certificateError(err error) (string, bool) {
	var verify *tls.CertificateVerificationError
	if errors.As(err, &verify) && verify.Err != nil {
		return verify.Err.Error(), true
	}
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknownCA):
		return unknownCA.Error(), true
	case errors.As(err, &hostname):
		return hostname.Error(), true
	case errors.As(err, &invalid):
		return invalid.Error(), true
	}
	return "", false
}
