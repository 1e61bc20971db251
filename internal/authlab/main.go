// Command authlab is the OIDC identity provider of the real-broker
// authentication suite (scripts/auth-up.sh): a token endpoint for the
// client credentials grant and the JWKS that Kafka's
// OAuthBearerValidatorCallbackHandler checks its tokens against. Its keys
// are real RSA keys made at start, its tokens real RS256 JWTs
// (github.com/golang-jwt/jwt/v5).
//
//	authlab -dir DIR -ttl 20s
//
// It reads DIR/oidc-clients (lines "client-id:secret"), listens on
// 127.0.0.1 (a free port), writes its base URL to DIR/oidc-url when ready,
// and serves until killed:
//
//	POST /token  grant_type=client_credentials, client authenticated by
//	             HTTP Basic or form fields; issues a JWT with iss the base
//	             URL, aud "kafka", sub the client id, scope as asked, and
//	             exp ttl ahead. Unknown client or wrong secret: 401
//	             invalid_client.
//	GET /jwks    the public key, as a JSON Web Key Set.
//	GET /stats   {"issued": N}: tokens issued so far (the suite checks
//	             that kbatch asked again before expiry).
package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const keyID = "authlab-1"

func main() {
	dir := flag.String("dir", "", "folder with oidc-clients; oidc-url is written there")
	ttl := flag.Duration("ttl", 20*time.Second, "lifetime of the tokens issued")
	flag.Parse()
	if err := run(*dir, *ttl); err != nil {
		fmt.Fprintln(os.Stderr, "authlab:", err)
		os.Exit(1)
	}
}

func run(dir string, ttl time.Duration) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	clients, err := readClients(filepath.Join(dir, "oidc-clients"))
	if err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	var issued atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{
			"kty": "RSA", "use": "sig", "alg": "RS256", "kid": keyID,
			"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
		}}})
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]int64{"issued": issued.Load()})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		want, known := clients[id]
		if !known || subtle.ConstantTimeCompare([]byte(want), []byte(secret)) != 1 {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client", "error_description": "client authentication failed"})
			return
		}
		now := time.Now()
		n := issued.Add(1)
		claims := jwt.MapClaims{
			"iss": base, "aud": "kafka", "sub": id, "scope": r.PostForm.Get("scope"),
			"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(ttl).Unix(),
			"jti": fmt.Sprintf("authlab-%d", n),
		}
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
		tok.Header["kid"] = keyID
		signed, err := tok.SignedString(key)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"access_token": signed, "token_type": "Bearer", "expires_in": int(ttl.Seconds())})
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	tmp := filepath.Join(dir, "oidc-url.tmp")
	if err := os.WriteFile(tmp, []byte(base+"\n"), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "oidc-url")); err != nil {
		return err
	}
	return srv.Serve(ln)
}

func readClients(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if id, secret, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[id] = secret
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no client", path)
	}
	return out, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
