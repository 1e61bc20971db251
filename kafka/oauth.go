package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/aws/aws-msk-iam-sasl-signer-go/signer"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// TokenFunc fetches a fresh bearer token and the time it expires (the
// zero time when that is unknown).
type TokenFunc func(ctx context.Context) (token string, expiry time.Time, err error)

// TokenError is a failure to get a token (read a token file, run a token
// command, ask a token endpoint, sign an AWS request). Its message names
// where the token was to come from and never holds a secret.
type TokenError struct {
	// What names the source: "OAUTHBEARER token (token_file)".
	What string
	Err  error
}

func (e *TokenError) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.What+": ") {
		return msg // the source named itself (config's secret sources do)
	}
	return e.What + ": " + msg
}
func (e *TokenError) Unwrap() error { return e.Err }

// tokenFetchTimeout bounds one token fetch.
const tokenFetchTimeout = 30 * time.Second

// TokenProvider gives the bearer tokens of a TokenFunc: it keeps
// the token and fetches a new one once 80% of its lifetime has passed (or
// at most a minute before it expires), so every new connection, and every
// re-authentication the broker asks for (KIP-368), gets a token that is
// still valid. A token with no known expiry is kept for a minute. It is
// safe for concurrent use.
type TokenProvider struct {
	what       string
	fetch      TokenFunc
	extensions map[string]string
	now        func() time.Time

	mu        sync.Mutex
	token     string
	refreshAt time.Time
	fetches   int
}

// NewTokenProvider returns a provider of tokens from fetch, sent with the
// SASL extensions ext (KIP-342); what names the source in errors.
func NewTokenProvider(what string, fetch TokenFunc, ext map[string]string) *TokenProvider {
	return &TokenProvider{what: what, fetch: fetch, extensions: ext, now: time.Now}
}

// unknownExpiryTTL is how long a token with no known expiry is kept.
const unknownExpiryTTL = time.Minute

// saramaTokens is a TokenProvider as sarama asks for it.
type saramaTokens struct{ p *TokenProvider }

func (s saramaTokens) Token() (*sarama.AccessToken, error) { return s.p.accessToken() }

// accessToken returns a valid token, fetching a new one when the kept one
// is due for renewal.
func (p *TokenProvider) accessToken() (*sarama.AccessToken, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.token == "" || !now.Before(p.refreshAt) {
		ctx, cancel := context.WithTimeout(context.Background(), tokenFetchTimeout)
		tok, exp, err := p.fetch(ctx)
		cancel()
		if err != nil {
			return nil, &TokenError{What: p.what, Err: err}
		}
		if tok == "" {
			return nil, &TokenError{What: p.what, Err: errors.New("the token is empty")}
		}
		if exp.IsZero() {
			exp = JWTExpiry(tok)
		}
		switch {
		case exp.IsZero():
			p.refreshAt = now.Add(unknownExpiryTTL)
		case !exp.After(now):
			return nil, &TokenError{What: p.what, Err: fmt.Errorf("the token expired at %s: get a new one", exp.UTC().Format(time.RFC3339))}
		default:
			life := exp.Sub(now)
			p.refreshAt = now.Add(max(life*8/10, life-time.Minute))
		}
		p.token = tok
		p.fetches++
	}
	return &sarama.AccessToken{Token: p.token, Extensions: p.extensions}, nil
}

// Fetches counts the tokens fetched so far (tests).
func (p *TokenProvider) Fetches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fetches
}

// JWTExpiry returns the "exp" claim of a JWT, read without checking its
// signature (the broker checks it; kbatch only wants to know when to ask
// for a new one); the zero time when token is no JWT or has no exp.
func JWTExpiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp == nil {
		return time.Time{}
	}
	f, err := claims.Exp.Float64()
	if err != nil || f <= 0 || f > 1<<40 {
		return time.Time{}
	}
	return time.Unix(int64(f), 0)
}

// ClientCredentials returns a TokenFunc for the OAuth 2.0 client
// credentials grant (RFC 6749 §4.4) at endpoint; secret is called for
// the client secret at each fetch. tlsConf, if not nil, is the TLS
// configuration for the endpoint (a private CA); nil is Go's default.
// Errors say what the endpoint answered (its error code and description,
// escaped), never the secret.
func ClientCredentials(endpoint, clientID string, secret func() (string, error), scope string, tlsConf *tls.Config) TokenFunc {
	hc := &http.Client{Timeout: tokenFetchTimeout}
	if tlsConf != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = tlsConf
		hc.Transport = tr
	}
	return func(ctx context.Context) (string, time.Time, error) {
		s, err := secret()
		if err != nil {
			return "", time.Time{}, err
		}
		cfg := clientcredentials.Config{ClientID: clientID, ClientSecret: s, TokenURL: endpoint, Scopes: strings.Fields(scope)}
		ctx = context.WithValue(ctx, oauth2.HTTPClient, hc)
		tok, err := cfg.Token(ctx)
		if err != nil {
			return "", time.Time{}, describeTokenEndpointError(err, s)
		}
		return tok.AccessToken, tok.Expiry, nil
	}
}

func describeTokenEndpointError(err error, secret string) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := "the token endpoint refused"
		if re.Response != nil {
			msg += ": HTTP " + re.Response.Status
		}
		if re.ErrorCode != "" {
			msg += ": " + re.ErrorCode
		}
		if re.ErrorDescription != "" {
			msg += " (" + re.ErrorDescription + ")"
		}
		if re.ErrorCode == "invalid_client" || re.Response != nil && re.Response.StatusCode == http.StatusUnauthorized {
			msg += "; check client_id and the client secret"
		}
		return errors.New(redact(firstLine(msg), secret))
	}
	msg := redact(firstLine(err.Error()), secret)
	var unknownCA x509.UnknownAuthorityError
	if errors.As(err, &unknownCA) {
		msg += " (an endpoint with a private CA: set token_endpoint_ca in the profile's sasl table)"
	}
	return fmt.Errorf("asking the token endpoint: %s", msg)
}

// MSKIAMToken returns a TokenFunc that signs an AWS_MSK_IAM token
// (aws-msk-iam-sasl-signer-go) for region, with credentials from the
// named profile of the AWS shared configuration, or from the default
// chain when profile is "".
func MSKIAMToken(region, profile string) TokenFunc {
	return func(ctx context.Context) (string, time.Time, error) {
		var (
			tok string
			ms  int64
			err error
		)
		if profile != "" {
			tok, ms, err = signer.GenerateAuthTokenFromProfile(ctx, region, profile)
		} else {
			tok, ms, err = signer.GenerateAuthToken(ctx, region)
		}
		if err != nil {
			msg := firstLine(err.Error())
			if strings.Contains(msg, "credentials") {
				msg += " (give AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or aws_profile, aws sso login, or an instance or task role)"
			}
			return "", time.Time{}, errors.New(msg)
		}
		return tok, time.UnixMilli(ms), nil
	}
}

// redact replaces every occurrence of secret in s.
func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "[redacted]")
}

// firstLine is s up to its first line break. Text from a server stays
// as it came: it is escaped once, where it reaches the terminal
// (record.String at the edge), as doubling backslashes twice would show
// them doubled twice.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}
