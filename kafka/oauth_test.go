package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func jwtWithExp(exp int64) string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(fmt.Sprintf(`{"sub":"x","exp":%d}`, exp))) + "."
}

func TestJWTExpiry(t *testing.T) {
	if got := JWTExpiry(jwtWithExp(1900000000)); !got.Equal(time.Unix(1900000000, 0)) {
		t.Errorf("exp %v", got)
	}
	for _, tok := range []string{"opaque", "a.b", "a.!!!.c", jwtWithExp(0), base64.RawURLEncoding.EncodeToString([]byte(`{}`)) + ".e30.", "x.eyJleHAiOiJzb29uIn0.y"} {
		if got := JWTExpiry(tok); !got.IsZero() {
			t.Errorf("JWTExpiry(%q) = %v, want zero", tok, got)
		}
	}
}

// TestTokenProviderRefresh checks when the provider asks for a new token:
// not before 80% of the lifetime (or a minute before expiry, whichever
// is later), always after; every minute for a token with no expiry; and
// an expired token is an error naming the source, not a login attempt.
func TestTokenProviderRefresh(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	var fetched []string
	next := func(tok string, exp time.Time) TokenFunc {
		return func(context.Context) (string, time.Time, error) {
			fetched = append(fetched, tok)
			return tok, exp, nil
		}
	}
	p := NewTokenProvider("test token", nil, map[string]string{"k": "v"})
	p.now = func() time.Time { return now }

	p.fetch = next("t1", now.Add(100*time.Second)) // refresh at 80 s
	tok, err := p.accessToken()
	if err != nil || tok.Token != "t1" || tok.Extensions["k"] != "v" {
		t.Fatalf("token %+v, %v", tok, err)
	}
	for _, step := range []struct {
		after   time.Duration // since the step before
		fetch   string        // the token fetched from now on ("": the same)
		expires time.Duration // its lifetime from now (0: no expiry)
		want    string
		at      string
	}{
		{79 * time.Second, "t2", time.Second + time.Hour, "t1", "at 79 s of 100 (kept)"},
		{time.Second, "", 0, "t2", "at 80 s of 100 (new)"},
		// An hour-long token is renewed a minute before it expires (later
		// than at 80%, 48 min); t3 has no expiry and is not a JWT.
		{58 * time.Minute, "t3", 0, "t2", "at 58 min of 60 (kept)"},
		{time.Minute, "", 0, "t3", "at 59 min of 60"},
		{59 * time.Second, "", 0, "t3", "59 s after a token with no expiry (kept)"},
	} {
		now = now.Add(step.after)
		if step.fetch != "" {
			var exp time.Time
			if step.expires != 0 {
				exp = now.Add(step.expires)
			}
			p.fetch = next(step.fetch, exp)
		}
		if tok, _ := p.accessToken(); tok.Token != step.want {
			t.Errorf("%s: %s, want %s", step.at, tok.Token, step.want)
		}
	}
	p.fetch = next(jwtWithExp(now.Add(-time.Second).Unix()), time.Time{})
	now = now.Add(time.Second)
	_, err = p.accessToken()
	var te *TokenError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "test token: the token expired at") {
		t.Errorf("expired JWT: %v", err)
	}
	if len(fetched) != 4 || p.Fetches() != 3 {
		t.Errorf("fetched %v (%d kept), want 4 fetches of which 3 kept", fetched, p.Fetches())
	}
	p.fetch = func(context.Context) (string, time.Time, error) { return "", time.Time{}, errors.New("boom") }
	if _, err := p.accessToken(); err == nil || err.Error() != "test token: boom" {
		t.Errorf("fetch error: %v", err)
	}
	// A source whose errors already name it (config's secret sources
	// do) is not named twice.
	p.fetch = func(context.Context) (string, time.Time, error) {
		return "", time.Time{}, errors.New("test token: the command failed (exit status 1)")
	}
	if _, err := p.accessToken(); err == nil || err.Error() != "test token: the command failed (exit status 1)" {
		t.Errorf("fetch error naming its source: %v", err)
	}
}

func TestClientCredentials(t *testing.T) {
	const secret = "s3cret-Client-Value"
	var scopes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id, pw, ok := r.BasicAuth()
		if !ok {
			id, pw = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		scopes = append(scopes, r.PostForm.Get("scope"))
		w.Header().Set("Content-Type", "application/json")
		switch {
		case id == "kbatch" && pw == secret:
			fmt.Fprint(w, `{"access_token":"tok-1","token_type":"Bearer","expires_in":120}`)
		case id == "echo":
			w.WriteHeader(http.StatusBadRequest)
			// A hostile endpoint echoing the secret, with terminal escapes.
			fmt.Fprintf(w, `{"error":"invalid_request","error_description":"bad secret %s \u001b[31m"}`, pw)
		default:
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":"invalid_client"}`)
		}
	}))
	defer srv.Close()
	secretFn := func() (string, error) { return secret, nil }
	start := time.Now()
	tok, exp, err := ClientCredentials(srv.URL, "kbatch", secretFn, "kafka read", nil)(context.Background())
	if err != nil || tok != "tok-1" || exp.Before(start.Add(119*time.Second)) || exp.After(time.Now().Add(121*time.Second)) {
		t.Fatalf("token %q, expiry %v, %v", tok, exp, err)
	}
	if scopes[0] != "kafka read" {
		t.Errorf("scope %q", scopes[0])
	}
	_, _, err = ClientCredentials(srv.URL, "other", secretFn, "", nil)(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "invalid_client") || !strings.Contains(err.Error(), "check client_id") {
		t.Errorf("wrong client: %v", err)
	}
	_, _, err = ClientCredentials(srv.URL, "echo", secretFn, "", nil)(context.Background())
	// The endpoint's text stays as it came, on one line: it is escaped
	// once, where it is printed.
	if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("echoing endpoint: %q", err)
	}
	_, _, err = ClientCredentials("http://127.0.0.1:1/token", "kbatch", secretFn, "", nil)(context.Background())
	if err == nil || !strings.Contains(err.Error(), "asking the token endpoint") {
		t.Errorf("unreachable endpoint: %v", err)
	}
}

// A token endpoint whose certificate comes from a private CA: refused
// with Go's defaults (with a word on token_endpoint_ca), accepted with
// that CA.
func TestClientCredentialsPrivateCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"tok-ca","token_type":"Bearer","expires_in":60}`)
	}))
	defer srv.Close()
	secretFn := func() (string, error) { return "s", nil }
	_, _, err := ClientCredentials(srv.URL, "kbatch", secretFn, "", nil)(context.Background())
	if err == nil || !strings.Contains(err.Error(), "token_endpoint_ca") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("private CA without token_endpoint_ca: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tok, _, err := ClientCredentials(srv.URL, "kbatch", secretFn, "", &tls.Config{RootCAs: pool})(context.Background())
	if err != nil || tok != "tok-ca" {
		t.Fatalf("with the CA: %q, %v", tok, err)
	}
}
