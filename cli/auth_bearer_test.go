package cli

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-msk-iam-sasl-signer-go/signer"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// bearerBroker is a kfake cluster whose SASL handshake and authenticate
// requests are answered by check: it offers OAUTHBEARER only, splits the
// client's first message (RFC 7628) into the token and the extensions,
// and refuses with SASL_AUTHENTICATION_FAILED (58) what check refuses.
// It counts the logins it accepted.
type bearerBroker struct {
	addr string
	mu   sync.Mutex
	ok   int
	exts []map[string]string
}

func newBearerBroker(t *testing.T, check func(token string) error) *bearerBroker {
	t.Helper()
	fake := testkafka.Fake(t, kfake.SeedTopics(2, "bearer-events"))
	b := &bearerBroker{addr: fake.ListenAddrs()[0]}
	testkafka.OfferOAuthBearer(fake)
	fake.ControlKey(kmsg.SASLAuthenticate.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		r := req.(*kmsg.SASLAuthenticateRequest)
		resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		token, exts, err := splitBearerMessage(string(r.SASLAuthBytes))
		if err == nil {
			err = check(token)
		}
		if err != nil {
			resp.ErrorCode = 58 // SASL_AUTHENTICATION_FAILED
			msg := "Authentication failed: " + err.Error()
			resp.ErrorMessage = &msg
			return resp, nil, true
		}
		b.mu.Lock()
		b.ok++
		b.exts = append(b.exts, exts)
		b.mu.Unlock()
		resp.SessionLifetimeMillis = 0
		return resp, nil, true
	})
	return b
}

func (b *bearerBroker) accepted() (int, []map[string]string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ok, append([]map[string]string(nil), b.exts...)
}

// splitBearerMessage reads "n,,\x01auth=Bearer TOKEN\x01k=v\x01...\x01\x01".
func splitBearerMessage(msg string) (string, map[string]string, error) {
	gs2, rest, ok := strings.Cut(msg, "\x01")
	if !ok || !strings.HasPrefix(gs2, "n,") || !strings.HasSuffix(rest, "\x01\x01") {
		return "", nil, errors.New("not an OAUTHBEARER client first message")
	}
	exts := map[string]string{}
	token := ""
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "\x01\x01"), "\x01") {
		k, v, _ := strings.Cut(kv, "=")
		if k == "auth" {
			token, ok = strings.CutPrefix(v, "Bearer ")
			if !ok {
				return "", nil, errors.New("auth is not a Bearer token")
			}
			continue
		}
		exts[k] = v
	}
	if token == "" {
		return "", nil, errors.New("no token")
	}
	return token, exts, nil
}

// sigV4Checker checks an AWS_MSK_IAM token the way MSK does: the token is
// a base64url SigV4-presigned URL for kafka-cluster:Connect at
// kafka.REGION.amazonaws.com; it recomputes the signature with the secret
// key it knows for the access key id (written here from the SigV4
// specification, not with the AWS SDK that signed it) and checks the
// region, service, action and validity window.
type sigV4Checker struct {
	region string
	keys   map[string]string // access key id -> secret access key
	now    func() time.Time
}

func (c sigV4Checker) check(token string) error {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return errors.New("token is not base64url")
	}
	u, err := url.Parse(string(raw))
	if err != nil || u.Scheme != "https" || u.Path != "/" {
		return errors.New("token is not an https URL")
	}
	q := u.Query()
	if u.Host != "kafka."+c.region+".amazonaws.com" {
		return fmt.Errorf("signed for host %s", u.Host)
	}
	if q.Get("Action") != "kafka-cluster:Connect" || q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" || q.Get("X-Amz-SignedHeaders") != "host" {
		return errors.New("not a kafka-cluster:Connect AWS4-HMAC-SHA256 request signing host")
	}
	cred := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(cred) != 5 || cred[2] != c.region || cred[3] != "kafka-cluster" || cred[4] != "aws4_request" {
		return errors.New("credential scope is not DATE/" + c.region + "/kafka-cluster/aws4_request")
	}
	secret, ok := c.keys[cred[0]]
	if !ok {
		return errors.New("unknown access key id")
	}
	amzDate := q.Get("X-Amz-Date")
	signedAt, err := time.Parse("20060102T150405Z", amzDate)
	if err != nil || !strings.HasPrefix(amzDate, cred[1]) {
		return errors.New("bad X-Amz-Date")
	}
	var expires time.Duration
	if _, err := fmt.Sscanf(q.Get("X-Amz-Expires"), "%d", &expires); err != nil || expires <= 0 || expires > 15*60 {
		return errors.New("bad X-Amz-Expires")
	}
	now := c.now()
	if now.Before(signedAt.Add(-5*time.Minute)) || now.After(signedAt.Add(expires*time.Second)) {
		return errors.New("signature expired or from the future")
	}
	got := q.Get("X-Amz-Signature")
	// The canonical query: every parameter but the signature and the
	// User-Agent (added after signing), sorted, RFC 3986 encoded.
	var keys []string
	for k := range q {
		if k != "X-Amz-Signature" && k != "User-Agent" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, uriEncode(k)+"="+uriEncode(q.Get(k)))
	}
	emptyHash := sha256.Sum256(nil)
	canonical := strings.Join([]string{"GET", "/", strings.Join(parts, "&"), "host:" + u.Host + "\n", "host", hex.EncodeToString(emptyHash[:])}, "\n")
	ch := sha256.Sum256([]byte(canonical))
	scope := strings.Join(cred[1:], "/")
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(ch[:])
	key := []byte("AWS4" + secret)
	for _, part := range cred[1:] {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, toSign))
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errors.New("signature does not match")
	}
	return nil
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// uriEncode is SigV4's UriEncode: unreserved characters as they are,
// every other byte as %XX.
func uriEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

const (
	testAKID    = "AKIAKBATCHTEST000001"
	testSecret  = "kbatchTestSecretKey/0123456789abcdefghijK"
	testSession = "kbatchTestSessionToken+0123456789/abcdefghijklmnop=="
)

// TestSigV4CheckerRefusesTampering shows the checker of the MSK IAM tests
// is a real check: a token from the signer passes, and each change to it
// (another secret, region, action, time, a byte of the signature) fails.
func TestSigV4CheckerRefusesTampering(t *testing.T) {
	ctx := context.Background()
	creds := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret, SessionToken: testSession}, nil
	})
	token, _, err := signer.GenerateAuthTokenFromCredentialsProvider(ctx, "us-east-1", creds)
	if err != nil {
		t.Fatal(err)
	}
	c := sigV4Checker{region: "us-east-1", keys: map[string]string{testAKID: testSecret}, now: time.Now}
	if err := c.check(token); err != nil {
		t.Fatalf("a genuine token is refused: %v", err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(token)
	tamper := func(f func(q url.Values)) string {
		u, _ := url.Parse(string(raw))
		q := u.Query()
		f(q)
		u.RawQuery = q.Encode()
		return base64.RawURLEncoding.EncodeToString([]byte(u.String()))
	}
	bad := map[string]string{
		"action":        tamper(func(q url.Values) { q.Set("Action", "kafka-cluster:AlterCluster") }),
		"date":          tamper(func(q url.Values) { q.Set("X-Amz-Date", time.Now().UTC().Add(-time.Minute).Format("20060102T150405Z")) }),
		"expires":       tamper(func(q url.Values) { q.Set("X-Amz-Expires", "899") }),
		"session token": tamper(func(q url.Values) { q.Set("X-Amz-Security-Token", testSession+"x") }),
		"signature byte": tamper(func(q url.Values) {
			s := []byte(q.Get("X-Amz-Signature"))
			s[0] ^= 1
			q.Set("X-Amz-Signature", string(s))
		}),
	}
	for label, tok := range bad {
		if err := c.check(tok); err == nil {
			t.Errorf("tampered %s: accepted", label)
		}
	}
	if err := (sigV4Checker{region: "eu-west-1", keys: c.keys, now: time.Now}).check(token); err == nil {
		t.Error("a token for us-east-1 is accepted for eu-west-1")
	}
	if err := (sigV4Checker{region: "us-east-1", keys: map[string]string{testAKID: testSecret + "x"}, now: time.Now}).check(token); err == nil {
		t.Error("a token is accepted with another secret key")
	}
	late := sigV4Checker{region: "us-east-1", keys: c.keys, now: func() time.Time { return time.Now().Add(16 * time.Minute) }}
	if err := late.check(token); err == nil {
		t.Error("a token is accepted 16 minutes later")
	}
}

// TestMSKIAM runs kbatch with AWS_MSK_IAM against a broker that checks
// the SigV4 signature of the token (no AWS here): credentials from the
// environment and from a named profile, and the refusals.
func TestMSKIAM(t *testing.T) {
	checker := sigV4Checker{region: "us-east-1", keys: map[string]string{testAKID: testSecret}, now: time.Now}
	b := newBearerBroker(t, checker.check)
	dir := t.TempDir()
	profile := func(name, extra string) string {
		return writeFile(t, dir, name+".toml", fmt.Sprintf(`[clusters.msk]
brokers = [%q]
[clusters.msk.sasl]
mechanism = "AWS_MSK_IAM"
%s
`, b.addr, extra), 0o600)
	}
	awsFiles := writeFile(t, dir, "aws-config", "[default]\nregion = us-east-1\n[profile reader]\nregion = us-east-1\n", 0o600)
	awsCreds := writeFile(t, dir, "aws-credentials", fmt.Sprintf("[reader]\naws_access_key_id = %s\naws_secret_access_key = %s\n", testAKID, testSecret), 0o600)
	noIMDS := []string{"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(dir, "none")}
	envCreds := append([]string{"AWS_ACCESS_KEY_ID=" + testAKID, "AWS_SECRET_ACCESS_KEY=" + testSecret, "AWS_SESSION_TOKEN=" + testSession}, noIMDS...)
	secrets := []string{testSecret, testSession}

	t.Run("default chain from the environment", func(t *testing.T) {
		before, _ := b.accepted()
		r := execKbatch(t, envCreds, "topics", "--json", "--config", profile("env", `aws_region = "us-east-1"`), "--cluster", "msk")
		if infos := topicsJSON(t, r); len(infos) != 1 || infos[0].PartitionCount != 2 {
			t.Fatalf("topics %+v", infos)
		}
		if after, _ := b.accepted(); after <= before {
			t.Errorf("the broker accepted no login")
		}
		checkNoSecret(t, r, secrets...)
	})
	t.Run("region from AWS_REGION", func(t *testing.T) {
		r := execKbatch(t, append([]string{"AWS_REGION=us-east-1"}, envCreds...), "topics", "--json", "--config", profile("envregion", ""), "--cluster", "msk")
		topicsJSON(t, r)
	})
	t.Run("named profile", func(t *testing.T) {
		env := []string{"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + awsFiles, "AWS_SHARED_CREDENTIALS_FILE=" + awsCreds}
		r := execKbatch(t, env, "topics", "--json", "--config", profile("named", `aws_region = "us-east-1"
aws_profile = "reader"`), "--cluster", "msk")
		topicsJSON(t, r)
		checkNoSecret(t, r, secrets...)
	})
	t.Run("wrong secret key", func(t *testing.T) {
		env := append([]string{"AWS_ACCESS_KEY_ID=" + testAKID, "AWS_SECRET_ACCESS_KEY=" + testSecret + "x"}, noIMDS...)
		r := execKbatch(t, env, "topics", "--dial-timeout", "5s", "--config", profile("wrong", `aws_region = "us-east-1"`), "--cluster", "msk")
		checkOneLine(t, r, exitFailure, []string{"SASL authentication failed for AWS_MSK_IAM", "refused the IAM signature", "aws_region"}, secrets...)
	})
	t.Run("wrong region", func(t *testing.T) {
		r := execKbatch(t, envCreds, "topics", "--dial-timeout", "5s", "--config", profile("region", `aws_region = "eu-west-1"`), "--cluster", "msk")
		checkOneLine(t, r, exitFailure, []string{"refused the IAM signature"}, secrets...)
	})
	t.Run("no credentials", func(t *testing.T) {
		r := execKbatch(t, noIMDS, "topics", "--dial-timeout", "5s", "--config", profile("none", `aws_region = "us-east-1"`), "--cluster", "msk")
		checkOneLine(t, r, exitFailure, []string{"AWS_MSK_IAM token (region us-east-1)", "credentials"}, secrets...)
	})
	t.Run("unknown named profile", func(t *testing.T) {
		env := []string{"AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=" + awsFiles, "AWS_SHARED_CREDENTIALS_FILE=" + awsCreds}
		r := execKbatch(t, env, "topics", "--dial-timeout", "5s", "--config", profile("noprofile", `aws_region = "us-east-1"
aws_profile = "nobody"`), "--cluster", "msk")
		checkOneLine(t, r, exitFailure, []string{"AWS profile nobody"}, secrets...)
	})
}

// checkNoSecret fails when stdout or stderr of r holds one of secrets.
func checkNoSecret(t *testing.T, r cliRun, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
			t.Errorf("output shows a secret (%d bytes)", len(s))
		}
	}
}

// TestOAuthBearerStaticTokenAndExtensions runs kbatch with a token file
// and SASL extensions against a broker that checks the token sent is the
// file's and reads the extensions.
func TestOAuthBearerStaticTokenAndExtensions(t *testing.T) {
	dir := t.TempDir()
	token := "opaque-token-" + strings.Repeat("k", 40)
	b := newBearerBroker(t, func(got string) error {
		if got != token {
			return errors.New("unknown token")
		}
		return nil
	})
	tokFile := writeFile(t, dir, "token", token+"\n", 0o600)
	cfg := writeFile(t, dir, "bearer.toml", fmt.Sprintf(`[clusters.b]
brokers = [%q]
[clusters.b.sasl]
mechanism = "OAUTHBEARER"
token_file = %q
extensions = { logicalCluster = "lkc-123", identityPoolId = "pool-9" }
`, b.addr, tokFile), 0o600)
	r := execKbatch(t, nil, "topics", "--json", "--config", cfg, "--cluster", "b")
	topicsJSON(t, r)
	checkNoSecret(t, r, token)
	n, exts := b.accepted()
	if n == 0 || exts[0]["logicalCluster"] != "lkc-123" || exts[0]["identityPoolId"] != "pool-9" {
		t.Errorf("accepted %d logins, extensions %v", n, exts)
	}

	if err := os.WriteFile(tokFile, []byte("another-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = execKbatch(t, nil, "topics", "--dial-timeout", "5s", "--config", cfg, "--cluster", "b")
	checkOneLine(t, r, exitFailure, []string{"SASL authentication failed for OAUTHBEARER", "refused the token"}, token, "another-token")

	if err := os.Chmod(tokFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = execKbatch(t, nil, "topics", "--json", "--config", cfg, "--cluster", "b")
	topicsJSON(t, r)
	if !strings.Contains(r.stderr, "warning: OAUTHBEARER token file") || !strings.Contains(r.stderr, "chmod 600") {
		t.Errorf("no warning about a token file others can read: %q", r.stderr)
	}
	checkNoSecret(t, r, token)
}

// TestOAuthBearerTokenEndpointPrivateCA: the client credentials flow
// against a token endpoint whose certificate a private CA signed. Without
// token_endpoint_ca the system's CAs refuse it: one line that names the
// key; with it, kbatch logs in with the endpoint's token.
func TestOAuthBearerTokenEndpointPrivateCA(t *testing.T) {
	dir := t.TempDir()
	const secret = "client-secret-" + "ca-test-value"
	idp := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pw, ok := r.BasicAuth(); !ok || pw != secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"tok-from-private-ca","token_type":"Bearer","expires_in":300}`)
	}))
	idp.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	idp.StartTLS()
	defer idp.Close()
	b := newBearerBroker(t, func(got string) error {
		if got != "tok-from-private-ca" {
			return errors.New("unknown token")
		}
		return nil
	})
	ca := writeFile(t, dir, "idp-ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: idp.Certificate().Raw})), 0o644)
	profile := func(extra string) string {
		return writeFile(t, dir, "idp.toml", fmt.Sprintf(`[clusters.b]
brokers = [%q]
[clusters.b.sasl]
mechanism = "OAUTHBEARER"
token_endpoint = "%s/token"
client_id = "kbatch"
client_secret_env = "KBATCH_TEST_CLIENT_SECRET"
%s
`, b.addr, idp.URL, extra), 0o600)
	}
	env := []string{"KBATCH_TEST_CLIENT_SECRET=" + secret}

	r := execKbatch(t, env, "topics", "--dial-timeout", "5s", "--config", profile(""), "--cluster", "b")
	checkOneLine(t, r, exitFailure, []string{"asking the token endpoint", "token_endpoint_ca"}, secret)

	r = execKbatch(t, env, "topics", "--json", "--config", profile(fmt.Sprintf("token_endpoint_ca = %q", ca)), "--cluster", "b")
	topicsJSON(t, r)
	checkNoSecret(t, r, secret)
	if n, _ := b.accepted(); n == 0 {
		t.Errorf("the broker accepted no login")
	}

	r = execKbatch(t, env, "topics", "--config", profile(fmt.Sprintf("token_endpoint_ca = %q", filepath.Join(dir, "missing.pem"))), "--cluster", "b")
	checkOneLine(t, r, exitUsage, []string{"token endpoint CA file", "missing.pem"}, secret)
}

// TestWatchReportsAFailedReauthentication: `kbatch watch --no-tui` over
// OAUTHBEARER whose token command starts failing mid-stream (the broker
// asks for a new login every 300 ms, KIP-368) writes a broker-error event that names the token failure, and
// reads the records produced meanwhile once the command works again.
func TestWatchReportsAFailedReauthentication(t *testing.T) {
	if testkafka.Real() {
		t.Skip("answers SASL itself: kfake only")
	}
	kc := testkafka.New(t)
	topic := kc.Topic("reauth", 1)
	fake := kc.Fake
	testkafka.OfferOAuthBearer(fake)
	fake.ControlKey(kmsg.SASLAuthenticate.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		fake.KeepControl()
		resp := req.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.SessionLifetimeMillis = 300
		return resp, nil, true
	})
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "token")
	token := unsecuredJWS("kbatch", time.Now().Add(10*time.Second))
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, dir, "reauth.toml", fmt.Sprintf("[clusters.r]\nbrokers = [%q]\nsasl = { mechanism = \"OAUTHBEARER\", token_command = \"cat %s\" }\n",
		kc.Brokers[0], tokFile), 0o600)
	cmd := exec.Command(kbatchBinary(t), "watch", "--no-tui", "--config", cfg, "--cluster", "r", "-t", topic,
		"--no-store", "--reset", "earliest", "--interval", "100ms")
	cmd.Env = isolatedEnv(t)
	lines, stderr := startLines[map[string]any](t, cmd)
	kc.ProduceN(topic, 0, 10, 20)
	read, reported, broken := 0.0, false, false
	deadline := time.After(90 * time.Second)
	for read < 30 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kbatch ended: %s", stderr.String())
			}
			switch l["type"] {
			case "batch":
				for _, r := range l["ranges"].([]any) {
					read = max(read, r.(map[string]any)["until"].(float64))
				}
				if read == 10 && !broken {
					broken = true
					if err := os.Remove(tokFile); err != nil {
						t.Fatal(err)
					}
					kc.ProduceN(topic, 0, 10, 20)
				}
			case "event":
				msg, _ := l["message"].(string)
				t.Logf("event %v: %s", l["code"], msg)
				if l["code"] == "broker-error" && strings.Contains(msg, "token") && !reported {
					if n := strings.Count(msg, "OAUTHBEARER token (token_command)"); n != 1 {
						t.Errorf("the event names the token source %d times, want once: %s", n, msg)
					}
					reported = true
					kc.ProduceN(topic, 0, 10, 20)
					if err := os.WriteFile(tokFile, []byte(unsecuredJWS("kbatch", time.Now().Add(time.Hour))+"\n"), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
		case <-deadline:
			t.Fatalf("after 90s: read up to %v of 30, token failure reported: %v; stderr: %s", read, reported, stderr.String())
		}
	}
}
