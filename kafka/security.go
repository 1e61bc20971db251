package kafka

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/IBM/sarama"
	"github.com/xdg-go/scram"
	"github.com/xdg-go/stringprep"
)

// scramClientFor returns the SCRAM conversation generator for mechanism
// ("SCRAM-SHA-256" or "SCRAM-SHA-512", any case); nil for any other
// mechanism. unprepped leaves out SASLprep of the user name and password:
// Kafka's clients and tools (kafka-configs, kafka-storage, the Admin API)
// use the UTF-8 bytes as typed, so for a password that SASLprep changes
// ("e" + U+0301, a no-break space) the broker holds the credential of the
// unprepared form; Dial falls back to it (see scramNeedsUnprepped).
func scramClientFor(mechanism string, unprepped bool) func() sarama.SCRAMClient {
	switch strings.ToUpper(mechanism) {
	case "SCRAM-SHA-256":
		return func() sarama.SCRAMClient { return &scramClient{hash: scram.SHA256, unprepped: unprepped} }
	case "SCRAM-SHA-512":
		return func() sarama.SCRAMClient { return &scramClient{hash: scram.SHA512, unprepped: unprepped} }
	}
	return nil
}

// scramNeedsUnprepped reports whether a failed connection is worth one
// more try without SASLprep: the mechanism is SCRAM, SASLprep changes the
// user name or password, and the broker refused the login or hung up
// during it.
func scramNeedsUnprepped(cc ClientConfig, cause error) bool {
	if cc.SASL == nil || !strings.HasPrefix(strings.ToUpper(cc.SASL.Mechanism), "SCRAM-") {
		return false
	}
	if !errors.Is(cause, sarama.ErrSASLAuthenticationFailed) && !errors.Is(cause, io.EOF) &&
		!errors.Is(cause, io.ErrUnexpectedEOF) && !errors.Is(cause, syscall.ECONNRESET) && !errors.Is(cause, syscall.EPIPE) {
		return false
	}
	for _, s := range []string{cc.SASL.User, cc.SASL.Password} {
		if p, err := stringprep.SASLprep.Prepare(s); err == nil && p != s {
			return true
		}
	}
	return false
}

// scramMaxIterations refuses servers that ask for absurd PBKDF2 work (a
// hostile broker could otherwise pin a CPU); Kafka allows at most 16384.
const scramMaxIterations = 1 << 20

// scramClient is one SCRAM conversation (RFC 5802, without channel
// binding), as sarama drives it: Begin, then Step("") for the client-first
// message, Step(server-first) for the client-final message, and
// Step(server-final), which checks the server's signature. The protocol
// (SASLprep of the user name and password, proof, signature) is
// github.com/xdg-go/scram's; this adapter adds what a client facing an
// untrusted broker needs around it: a bound on the iterations asked for,
// a server nonce that must really extend the client's, server error
// messages (e=) escaped before they can reach a terminal, and Done only
// once the server's signature checked out. It is used by one goroutine
// and never reused; the password never appears in an error.
type scramClient struct {
	hash scram.HashGeneratorFcn
	// unprepped skips SASLprep: Kafka derives credentials from the
	// password's UTF-8 bytes as typed (see scramClientFor).
	unprepped bool
	conv      *scram.ClientConversation
	nonce     string // the client nonce; drawn by Begin, set by tests
	step      int
	done      bool
}

// Begin prepares the conversation (SASLprep of the credentials) and draws
// the client nonce.
func (c *scramClient) Begin(user, password, authzID string) error {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return fmt.Errorf("scram: drawing a nonce: %w", err)
	}
	c.nonce = base64.RawStdEncoding.EncodeToString(b[:])
	newClient := c.hash.NewClient
	if c.unprepped {
		newClient = c.hash.NewClientUnprepped
	}
	cl, err := newClient(user, password, authzID)
	if err != nil {
		// The library's message names the user name, never the password.
		return fmt.Errorf("scram: %s", firstLine(err.Error()))
	}
	c.conv = cl.WithNonceGenerator(func() string { return c.nonce }).NewConversation()
	return nil
}

// Step answers the server's challenge; see the type comment for the order.
func (c *scramClient) Step(challenge string) (string, error) {
	if c.conv == nil {
		return "", errors.New("scram: Step before Begin")
	}
	c.step++
	switch c.step {
	case 1:
		return c.conv.Step("")
	case 2:
		if err := c.checkServerFirst(challenge); err != nil {
			return "", err
		}
		out, err := c.conv.Step(challenge)
		if err != nil {
			return "", fmt.Errorf("scram: %s", firstLine(err.Error()))
		}
		return out, nil
	case 3:
		if e, ok := scramAttrs(challenge)["e"]; ok {
			return "", fmt.Errorf("scram: server refused: %s", firstLine(e))
		}
		if _, err := c.conv.Step(challenge); err != nil || !c.conv.Valid() {
			return "", errors.New("scram: the server's signature does not match (is it the real broker?)")
		}
		c.done = true
		return "", nil
	}
	return "", errors.New("scram: conversation already finished")
}

// Done reports whether the server's final message was checked and its
// signature matched.
func (c *scramClient) Done() bool { return c.done }

// checkServerFirst refuses a server-first message before any key is
// derived from it: a server error, a nonce that does not extend the
// client's, a salt that is not base64, an iteration count out of bounds.
func (c *scramClient) checkServerFirst(serverFirst string) error {
	attrs := scramAttrs(serverFirst)
	if e, ok := attrs["e"]; ok {
		return fmt.Errorf("scram: server refused: %s", firstLine(e))
	}
	nonce, salt64, iter := attrs["r"], attrs["s"], attrs["i"]
	if !strings.HasPrefix(nonce, c.nonce) || len(nonce) == len(c.nonce) {
		return errors.New("scram: server nonce does not extend the client nonce")
	}
	if salt, err := base64.StdEncoding.DecodeString(salt64); err != nil || len(salt) == 0 {
		return errors.New("scram: server sent an invalid salt")
	}
	if n, err := strconv.Atoi(iter); err != nil || n < 1 || n > scramMaxIterations {
		return fmt.Errorf("scram: server asked for an invalid iteration count (%s)", firstLine(iter))
	}
	return nil
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
		if cc.SASL.User == "" {
			saslUser = strings.ToUpper(cc.SASL.Mechanism)
		}
	}
	var tokenErr *TokenError
	if errors.As(err, &tokenErr) {
		return tokenErr.Error()
	}
	if s := describeKerberosError(cc, err); s != "" {
		return s
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
	case cc.TLS != nil && strings.Contains(err.Error(), "remote error: tls: "):
		_, remote, _ := strings.Cut(err.Error(), "remote error: ")
		if len(cc.TLS.Certificates) == 0 && cc.TLS.GetClientCertificate == nil {
			return "the broker refused the TLS connection (" + firstLine(remote) + "): it wants a client certificate: give --tls-cert and --tls-key (cert_file, key_file)"
		}
		return "the broker refused the TLS connection (" + firstLine(remote) + "): it does not accept the client certificate (signed by a CA it does not trust, expired, or not for client authentication?)"
	case errors.Is(err, sarama.ErrSASLAuthenticationFailed):
		return "SASL authentication failed for " + saslUser + ": " + refusedHint(cc)
	case errors.Is(err, sarama.ErrUnsupportedSASLMechanism), errors.Is(err, sarama.ErrIllegalSASLState):
		return "the broker does not enable SASL mechanism " + saslUser + " (try another --sasl-mechanism)"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "the broker closed the connection: " + closedHint(cc, saslUser)
	}
	return ""
}

// refusedHint says what to check when the broker refused the credentials
// of cc's mechanism.
func refusedHint(cc ClientConfig) string {
	switch strings.ToUpper(cc.SASL.Mechanism) {
	case "OAUTHBEARER":
		return "the broker refused the token (expired, or not valid for this cluster: issuer, audience, scope, signing key?)"
	case "AWS_MSK_IAM":
		return "the broker refused the IAM signature (check the AWS credentials, aws_region against the cluster's region, and that the IAM policy allows kafka-cluster:Connect)"
	case "GSSAPI":
		return "the broker refused the Kerberos ticket (check kerberos_service_name and the broker's principal)"
	}
	return "wrong user name or password?"
}

// describeKerberosError explains a GSSAPI failure on the client side: the
// KDC refusing the login or not knowing a principal, or not answering.
// "" when err is not one.
func describeKerberosError(cc ClientConfig, err error) string {
	if cc.SASL == nil || cc.SASL.Kerberos == nil || !strings.EqualFold(cc.SASL.Mechanism, "GSSAPI") {
		return ""
	}
	k := cc.SASL.Kerberos
	msg := err.Error()
	principal := cc.SASL.User + "@" + k.Realm
	host := "HOST"
	if len(cc.Brokers) > 0 {
		if h, _, err := net.SplitHostPort(cc.Brokers[0]); err == nil {
			host = h
		}
	}
	service := k.ServiceName + "/" + host + "@" + k.Realm
	switch {
	case strings.Contains(msg, "KDC_ERR_PREAUTH_FAILED"):
		return "Kerberos: the KDC refused the login of " + principal + " (KDC_ERR_PREAUTH_FAILED): wrong password, or a keytab with old keys?"
	case strings.Contains(msg, "KDC_ERR_C_PRINCIPAL_UNKNOWN"):
		return "Kerberos: the KDC does not know the principal " + principal + " (check username and kerberos_realm)"
	case strings.Contains(msg, "KDC_ERR_S_PRINCIPAL_UNKNOWN"):
		return "Kerberos: the KDC does not know the brokers' principal " + service + " (check kerberos_service_name, and that the brokers are addressed by the host name in their principal)"
	case strings.Contains(msg, "KRB_AP_ERR"), strings.Contains(msg, "KDC_ERR"), strings.Contains(msg, "krb5"), strings.Contains(msg, "Kerberos"),
		strings.Contains(msg, "keytab"), strings.Contains(msg, "ccache"), strings.Contains(msg, "KDC"):
		return "Kerberos: " + firstLine(msg)
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
