package config

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// SecretSource says where a secret (a client secret, a token, a key
// passphrase) comes from: exactly one of the variable Env names, the
// first line of File, or the first line of what Command prints. There is
// no inline value: a secret never sits in the configuration itself.
type SecretSource struct {
	Env     string
	File    string
	Command string
}

// Set reports whether a source is given.
func (s SecretSource) Set() bool { return s.Env != "" || s.File != "" || s.Command != "" }

func (s SecretSource) count() int {
	n := 0
	for _, v := range []string{s.Env, s.File, s.Command} {
		if v != "" {
			n++
		}
	}
	return n
}

// Resolve reads the secret; what names it in messages ("OAUTHBEARER
// client secret"). Errors and warnings name the variable, file or the
// fact that a command failed, never the secret, and never a command's
// output.
func (s SecretSource) Resolve(what string, getenv func(string) string) (Secret, []string, error) {
	switch {
	case s.Env != "":
		v := getenv(s.Env)
		if v == "" {
			if looksLikeVariableName(s.Env) {
				return "", nil, fmt.Errorf("%s: variable %s is not set or empty", what, s.Env)
			}
			return "", nil, fmt.Errorf("%s: the variable named for it is not set or empty; the name is not shown, as it does not look like a variable name", what)
		}
		return Secret(v), nil, nil
	case s.File != "":
		return ReadSecretFile(s.File, what)
	case s.Command != "":
		v, err := RunSecretCommand(s.Command, what)
		return v, nil, err
	}
	return "", nil, fmt.Errorf("%s: no source given (set its _env, _file or _command)", what)
}

// secretCommandTimeout bounds a secret command (a password manager may
// ask for a passphrase on the terminal).
const secretCommandTimeout = 2 * time.Minute

// RunSecretCommand runs command with sh -c and returns the first line of
// its standard output as the secret. The command's standard error is
// discarded and its output never appears in an error: a failure names the
// exit status only. The command text itself is shown, as it is a
// configuration value (it must not hold the secret).
func RunSecretCommand(command, what string) (Secret, error) {
	ctx, cancel := context.WithTimeout(context.Background(), secretCommandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	var out limitedBuffer
	cmd.Stdout = &out
	cmd.Stdin = os.Stdin
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s: the command did not finish within %s", what, secretCommandTimeout)
	case errors.As(err, &ee):
		return "", fmt.Errorf("%s: the command failed (%s)", what, ee.ProcessState.String())
	case err != nil:
		return "", fmt.Errorf("%s: the command could not run: %v", what, describeOSError(err))
	case out.over:
		return "", fmt.Errorf("%s: the command printed more than 1 MiB", what)
	}
	line, _, _ := strings.Cut(out.String(), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", fmt.Errorf("%s: the command printed nothing", what)
	}
	return Secret(line), nil
}

// limitedBuffer keeps the first maxSmallFile bytes written to it. The
// buffer is a field, not embedded: an embedded bytes.Buffer's ReadFrom
// would let io.Copy bypass Write and its bound.
type limitedBuffer struct {
	buf  bytes.Buffer
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxSmallFile - b.buf.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *limitedBuffer) String() string { return b.buf.String() }

// OAuth configures SASL/OAUTHBEARER: either a static token (Token: from a
// variable, a file or a command, read again before it expires) or the
// OIDC client credentials flow (TokenEndpoint, ClientID, ClientSecret,
// Scope). Extensions are SASL extensions (KIP-342) sent with the token.
type OAuth struct {
	Token         SecretSource
	TokenEndpoint string
	ClientID      string
	ClientSecret  SecretSource
	// Scope is space-separated, as OAuth 2.0 writes it.
	Scope      string
	Extensions map[string]string
	// TokenEndpointCA is a PEM file of the CAs that the token endpoint's
	// certificate is checked against instead of the system's (a private
	// CA); the brokers' TLS settings do not apply to the endpoint.
	TokenEndpointCA string
}

func (o OAuth) zero() bool {
	return !o.Token.Set() && o.TokenEndpoint == "" && o.ClientID == "" && !o.ClientSecret.Set() && o.Scope == "" && len(o.Extensions) == 0 && o.TokenEndpointCA == ""
}

// TokenEndpointTLS is the TLS configuration for the token endpoint: nil
// (Go's defaults, the system's CAs) without TokenEndpointCA.
func (o OAuth) TokenEndpointTLS() (*tls.Config, error) {
	if o.TokenEndpointCA == "" {
		return nil, nil
	}
	pool, err := caPool(o.TokenEndpointCA, "token endpoint CA file")
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}, nil
}

// AWS configures AWS_MSK_IAM: the region of the cluster (else AWS_REGION
// or AWS_DEFAULT_REGION) and, optionally, a named profile of the AWS
// shared configuration; credentials come from the AWS default chain.
type AWS struct {
	Region  string
	Profile string
}

// Kerberos configures GSSAPI: the krb5.conf, the service name of the
// brokers (their principal is SERVICE/HOST@REALM), the realm of the
// user, and one of a keytab, a credential cache or the SASL password.
type Kerberos struct {
	Config      string
	ServiceName string
	Realm       string
	Keytab      string
	CCache      string
	DisableFAST *bool
}

func (k Kerberos) zero() bool {
	return k == Kerberos{}
}

// checkMechanism reports what the settings of s lack or have too many of
// for its mechanism; msg names keys of the profile's sasl table.
func (s SASL) checkMechanism() error {
	switch s.Mechanism {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		if s.User == "" {
			return fmt.Errorf("SASL %s needs a user name: pass --sasl-user or set sasl.username in the profile", s.Mechanism)
		}
	case "OAUTHBEARER":
		o := s.OAuth
		switch {
		case o.Token.Set() && o.TokenEndpoint != "":
			return errors.New("SASL OAUTHBEARER: give either token_file, token_env or token_command (a static token) or token_endpoint (client credentials), not both")
		case o.Token.Set():
			if o.TokenEndpointCA != "" {
				return errors.New("SASL OAUTHBEARER: token_endpoint_ca is for token_endpoint, not for a static token")
			}
			if o.Token.count() > 1 {
				return errors.New("SASL OAUTHBEARER: give only one of token_file, token_env and token_command")
			}
		case o.TokenEndpoint != "":
			if o.ClientID == "" {
				return errors.New("SASL OAUTHBEARER: token_endpoint needs client_id")
			}
			if !o.ClientSecret.Set() {
				return errors.New("SASL OAUTHBEARER: token_endpoint needs client_secret_env, client_secret_file or client_secret_command")
			}
			if o.ClientSecret.count() > 1 {
				return errors.New("SASL OAUTHBEARER: give only one of client_secret_env, client_secret_file and client_secret_command")
			}
			if o.TokenEndpointCA != "" && strings.HasPrefix(o.TokenEndpoint, "http://") {
				return errors.New("SASL OAUTHBEARER: token_endpoint_ca is for an https:// token_endpoint")
			}
		default:
			return errors.New("SASL OAUTHBEARER needs a token: set token_file, token_env or token_command, or token_endpoint with client_id and a client secret, in the profile's sasl table")
		}
	case "GSSAPI":
		k := s.Kerberos
		if s.User == "" || k.Realm == "" {
			return errors.New("SASL GSSAPI needs the user's principal: set username and kerberos_realm in the profile's sasl table")
		}
		n := 0
		for _, set := range []bool{k.Keytab != "", k.CCache != "", s.hasPasswordSource()} {
			if set {
				n++
			}
		}
		if n > 1 {
			return errors.New("SASL GSSAPI: give only one of kerberos_keytab, kerberos_ccache and a password")
		}
	}
	return nil
}

// checkSettings refuses settings that belong to another mechanism than
// the one chosen (a token_file under SCRAM is a mistake worth a word).
func (s SASL) checkSettings() error {
	oauth, aws, krb := !s.OAuth.zero(), s.AWS != AWS{}, !s.Kerberos.zero()
	switch {
	case oauth && s.Mechanism != "OAUTHBEARER":
		return fmt.Errorf("token and client settings are for mechanism OAUTHBEARER, not %s", s.Mechanism)
	case aws && s.Mechanism != "AWS_MSK_IAM":
		return fmt.Errorf("aws_region and aws_profile are for mechanism AWS_MSK_IAM, not %s", s.Mechanism)
	case krb && s.Mechanism != "GSSAPI":
		return fmt.Errorf("kerberos_* settings are for mechanism GSSAPI, not %s", s.Mechanism)
	case s.Mechanism == "OAUTHBEARER" || s.Mechanism == "AWS_MSK_IAM":
		if s.hasPasswordSource() {
			return fmt.Errorf("%s takes no password (use the token or AWS settings)", s.Mechanism)
		}
	}
	return nil
}
