package objstore

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/fixtures"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/record"
)

// fakeGCS serves the three GETs of the JSON API that gcsBucket sends —
// list (prefix, delimiter, maxResults, pageToken), object metadata and
// media (with Range) — from objects in memory, answering errors in GCS's
// JSON shape, and records every request.
type fakeGCS struct {
	mu        sync.Mutex
	buckets   map[string]map[string]fakeObject
	forbidden map[string]bool // buckets that answer 403
	unavail   int             // the next requests that answer 503
	requests  []fakeRequest
}

type fakeObject struct {
	data    []byte
	updated time.Time
}

type fakeRequest struct {
	path, query, auth, rng string
}

func newFakeGCS(t *testing.T) (*fakeGCS, *httptest.Server) {
	f := &fakeGCS{buckets: map[string]map[string]fakeObject{}, forbidden: map[string]bool{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeGCS) put(bucket, name string, data []byte, updated time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.buckets[bucket] == nil {
		f.buckets[bucket] = map[string]fakeObject{}
	}
	f.buckets[bucket][name] = fakeObject{data, updated}
}

func (f *fakeGCS) seen() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func fakeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": code, "message": msg, "errors": []any{map[string]any{"message": msg, "domain": "global", "reason": "x"}},
	}})
}

func fakeItem(name string, o fakeObject) map[string]any {
	return map[string]any{
		"kind": "storage#object", "name": name, "size": strconv.Itoa(len(o.data)),
		"updated": o.updated.UTC().Format(time.RFC3339Nano), "timeCreated": o.updated.UTC().Format(time.RFC3339Nano),
		"contentType": "application/octet-stream", "etag": "CAE=",
	}
}

func (f *fakeGCS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, fakeRequest{r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Range")})
	if f.unavail > 0 {
		f.unavail--
		fakeError(w, http.StatusServiceUnavailable, "try again")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/storage/v1/b/")
	if !ok || r.Method != http.MethodGet {
		fakeError(w, http.StatusBadRequest, "not a request of kbatch's")
		return
	}
	bucket, rest, _ := strings.Cut(rest, "/")
	if f.forbidden[bucket] {
		fakeError(w, http.StatusForbidden, "kbatch@x.iam.gserviceaccount.com does not have storage.objects.get access to the Google Cloud Storage object.\nPermission 'storage.objects.get' denied on resource (or it may not exist).")
		return
	}
	objs, ok := f.buckets[bucket]
	if !ok {
		fakeError(w, http.StatusNotFound, "The specified bucket does not exist.")
		return
	}
	q := r.URL.Query()
	if rest == "o" {
		f.list(w, objs, q)
		return
	}
	name, err := url.PathUnescape(strings.TrimPrefix(rest, "o/"))
	o, ok := objs[name]
	if err != nil || !ok {
		fakeError(w, http.StatusNotFound, "No such object: "+bucket+"/"+name)
		return
	}
	if q.Get("alt") != "media" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(fakeItem(name, o))
		return
	}
	data, code := o.data, http.StatusOK
	if rng := r.Header.Get("Range"); rng != "" {
		var from, to int
		if n, _ := fmt.Sscanf(rng, "bytes=%d-%d", &from, &to); n == 0 {
			fakeError(w, http.StatusBadRequest, "bad range")
			return
		} else if n == 1 {
			to = len(data) - 1
		}
		to = min(to, len(data)-1)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(data)))
		data, code = data[from:to+1], http.StatusPartialContent
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(code)
	_, _ = w.Write(data)
}

// list answers a listing as GCS does: names and folders (prefixes) in one
// order, at most maxResults of both per page, the next page after the
// last entry's name.
func (f *fakeGCS) list(w http.ResponseWriter, objs map[string]fakeObject, q url.Values) {
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	max, err := strconv.Atoi(q.Get("maxResults"))
	if err != nil || max <= 0 {
		max = 1000
	}
	var entries []string
	for name := range objs {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if i := strings.Index(rest, delim); delim != "" && i >= 0 {
			name = prefix + rest[:i+len(delim)]
		}
		entries = append(entries, name)
	}
	slices.Sort(entries)
	entries = slices.Compact(entries)
	if tok := q.Get("pageToken"); tok != "" {
		i, _ := slices.BinarySearch(entries, tok)
		for i < len(entries) && entries[i] <= tok {
			i++
		}
		entries = entries[i:]
	}
	res := map[string]any{"kind": "storage#objects"}
	if len(entries) > max {
		entries = entries[:max]
		res["nextPageToken"] = entries[max-1]
	}
	var items []any
	var prefixes []string
	for _, e := range entries {
		if o, ok := objs[e]; ok {
			items = append(items, fakeItem(e, o))
		} else {
			prefixes = append(prefixes, e)
		}
	}
	// GCS sends the folders after the files.
	res["items"], res["prefixes"] = items, prefixes
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

// emulate points STORAGE_EMULATOR_HOST at srv, without a scheme, as
// scripts/objstore-up.sh does for fake-gcs-server.
func emulate(t *testing.T, srv *httptest.Server) {
	t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(srv.URL, "http://"))
}

// noCredentials makes any lookup of Google credentials fail without a
// request: GOOGLE_APPLICATION_CREDENTIALS names a file that is not there.
func noCredentials(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "missing.json"))
}

// readDirPaged reads the folder offsets of s and checks it holds want
// entries, the folder sub among them, read in requests requests.
func readDirPaged(t *testing.T, s *bucketStore, want int, requests int64) []spark.Entry {
	t.Helper()
	ents, err := s.ReadDir("offsets")
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != want || s.Requests() != requests {
		t.Fatalf("%d entries in %d requests, want %d (%d files and sub/) in %d", len(ents), s.Requests(), want, want-1, requests)
	}
	if i := slices.IndexFunc(ents, func(e spark.Entry) bool { return e.Name == "sub" }); i < 0 || !ents[i].Dir {
		t.Errorf("sub/ is not a folder in the listing")
	}
	return ents
}

// openFake opens loc with Open and returns its bucketStore.
func openFake(t *testing.T, loc string) *bucketStore {
	t.Helper()
	s, err := Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s.(*bucketStore)
}

// A checkpoint Spark wrote reads the same from a GCS emulator as from the
// folder, with four requests for Open, and no credentials sent: with
// STORAGE_EMULATOR_HOST there are none to send, and none are looked up.
func TestGCSEmulatorReadsLikeTheFolder(t *testing.T) {
	f, srv := newFakeGCS(t)
	emulate(t, srv)
	noCredentials(t)
	dir := filepath.Join(fixtures.SparkCheckpoint(t), "kafka-0-10-sql", "structured-streaming", "checkpoint-version-2.4.3-kafka-include-headers-default")
	updated := time.Date(2026, 11, 30, 12, 0, 0, 250e6, time.UTC)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		f.put("ckpt", "q/run1/"+filepath.ToSlash(rel), data, updated)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s := openFake(t, "gs://ckpt/q/run1")
	if n := len(f.seen()); n != 0 {
		t.Fatalf("Open sent %d requests, want none", n)
	}
	readsLikeTheFolder(t, s, dir)
	for _, r := range f.seen() {
		if r.auth != "" {
			t.Fatalf("%s?%s sent Authorization %q to the emulator", r.path, r.query, r.auth)
		}
	}
	e, err := s.Stat("offsets/0")
	if err != nil || !e.ModTime.Equal(updated) {
		t.Errorf("Stat(offsets/0) = %+v, %v; want the time the object was updated, %v", e, err, updated)
	}
	ents, err := s.ReadDir("")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range ents {
		if e.Dir {
			dirs = append(dirs, e.Name)
		}
	}
	if !slices.Equal(dirs, []string{"commits", "offsets", "sources"}) {
		t.Errorf("folders of the checkpoint: %v", dirs)
	}
}

// A folder longer than a page is listed page by page, each request asking
// for the next; a file over the limit is refused by its size, before its
// body is read.
func TestGCSPagesAndSizes(t *testing.T) {
	f, srv := newFakeGCS(t)
	emulate(t, srv)
	now := time.Now()
	for i := range 2500 {
		f.put("b", "offsets/"+strconv.Itoa(i), []byte("v1\n{}\n"), now)
	}
	f.put("b", "offsets/sub/deeper", []byte("x"), now)
	f.put("b", "big", make([]byte, 2048), now)
	s := openFake(t, "gs://b")
	readDirPaged(t, s, 2501, 3)
	reqs := f.seen()
	for i, r := range reqs {
		q, _ := url.ParseQuery(r.query)
		if q.Get("prefix") != "offsets/" || q.Get("delimiter") != "/" || q.Get("maxResults") != "1000" || (i > 0) != (q.Get("pageToken") != "") {
			t.Errorf("listing request %d: %s", i+1, r.query)
		}
	}
	n := len(f.seen())
	if _, err := s.ReadFile("big", 1024); err == nil || !strings.Contains(err.Error(), "not a checkpoint file") {
		t.Fatalf("a file over the limit: %v", err)
	}
	if reqs := f.seen(); len(reqs) != n+1 || reqs[n].rng != "" {
		t.Errorf("reading a file sent %+v, want one GET of the whole object", reqs[n:])
	}
}

// A missing bucket or object is fs.ErrNotExist, as the callers expect;
// a 403 is refused access, said in one line; a write is refused.
func TestGCSErrors(t *testing.T) {
	f, srv := newFakeGCS(t)
	emulate(t, srv)
	f.put("there", "ckpt/metadata", []byte(`{"id":"x"}`), time.Now())
	f.forbidden["closed"] = true

	for loc, file := range map[string]string{"gs://nobucket/ckpt": "metadata", "gs://there/ckpt": "offsets/0"} {
		s := openFake(t, loc)
		if _, err := s.ReadFile(file, 100); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), loc+"/"+file) {
			t.Errorf("ReadFile %s/%s: %v, want fs.ErrNotExist naming the file", loc, file, err)
		}
		if _, err := s.Stat(file); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Stat %s/%s: %v, want fs.ErrNotExist", loc, file, err)
		}
		if _, err := s.ReadDir("commits"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadDir %s/commits: %v, want fs.ErrNotExist", loc, err)
		}
	}

	s := openFake(t, "gs://closed/ckpt")
	_, err := s.ReadFile("metadata", 100)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("403: %v, want an error that is not fs.ErrNotExist", err)
	}
	want := "Google Cloud Storage answered 403 Forbidden: kbatch@x.iam.gserviceaccount.com does not have storage.objects.get access to the Google Cloud Storage object. Permission"
	if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "spark checkpoint gs://closed/ckpt/metadata: ") {
		t.Errorf("403 reads %q, want one line with %q", msg, want)
	}
	if _, err := s.ReadDir("offsets"); err == nil || !strings.Contains(err.Error(), "403 Forbidden") {
		t.Errorf("403 on a listing: %v", err)
	}
}

// The service's message is a stranger's text: it reaches the terminal
// escaped, on one line.
func TestGCSErrorMessageIsEscaped(t *testing.T) {
	e := newGCSError(&http.Response{StatusCode: 403}, []byte(`{"error":{"code":403,"message":"denied\u001b]8;;http://evil\u0007click\u001b[2J\nnext"}}`))
	msg := e.Error()
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "Google Cloud Storage answered 403 Forbidden: denied") {
		t.Errorf("message %q is not the server's text on one line", msg)
	}
	if printed := record.String(msg); strings.ContainsAny(printed, "\x1b\x07") {
		t.Errorf("printed as %q, with control bytes", printed)
	}
	if errors.Is(e, fs.ErrNotExist) || !errors.Is(newGCSError(&http.Response{StatusCode: 404}, nil), fs.ErrNotExist) {
		t.Error("only a 404 is fs.ErrNotExist")
	}
}

// A 503 is tried again after each pause; past the last one it is the
// answer.
func TestGCSRetries(t *testing.T) {
	f, srv := newFakeGCS(t)
	f.put("b", "metadata", []byte("{}"), time.Now())
	drv, err := newGCSBucket("b", true, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	drv.pauses = []time.Duration{time.Millisecond, time.Millisecond}
	s := &bucketStore{b: drv, loc: "gs://b"}
	f.unavail = 2
	if b, err := s.ReadFile("metadata", 100); err != nil || string(b) != "{}" {
		t.Fatalf("after two 503s: %q, %v", b, err)
	}
	if n := len(f.seen()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	f.unavail = 3
	if _, err := s.ReadFile("metadata", 100); err == nil || !strings.Contains(err.Error(), "503 Service Unavailable: try again") {
		t.Errorf("after three 503s: %v", err)
	}
	if n := len(f.seen()); n != 6 {
		t.Errorf("%d requests, want 6", n)
	}
}

func TestEmulatorEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:4443":          "http://127.0.0.1:4443/storage/v1/",
		"localhost:4443":          "http://localhost:4443/storage/v1/",
		"http://127.0.0.1:4443":   "http://127.0.0.1:4443/storage/v1/",
		"https://gcs.test:8443/x": "https://gcs.test:8443/storage/v1/",
	} {
		if got, err := emulatorEndpoint(in); got != want || err != nil {
			t.Errorf("emulatorEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := emulatorEndpoint("http://"); err == nil || !strings.Contains(err.Error(), "STORAGE_EMULATOR_HOST") {
		t.Errorf("emulatorEndpoint(http://) = %v", err)
	}
}

// Opening sends nothing and looks no credential up; the first read that
// needs one says which is missing, in one line.
func TestGCSCredentialsAtFirstRead(t *testing.T) {
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	noCredentials(t)
	s := openFake(t, "gs://b/ckpt")
	_, err := s.ReadFile("metadata", 100)
	var creds *errCredentials
	if err == nil || !strings.Contains(err.Error(), "GOOGLE_APPLICATION_CREDENTIALS") || strings.Contains(err.Error(), "\n") ||
		!errors.As(err, &creds) {
		t.Fatalf("no credentials: %v", err)
	}
	err = credentialsError(errors.New("google: could not find default credentials. See https://cloud.google.com/docs/authentication/external/set-up-adc for more information"))
	for _, want := range []string{"GOOGLE_APPLICATION_CREDENTIALS", "gcloud auth application-default login", "anonymous=true"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("none found: %q does not name %s", err, want)
		}
	}
}

// anonymous=true sends no credentials and looks none up.
func TestGCSAnonymous(t *testing.T) {
	f, srv := newFakeGCS(t)
	f.put("public", "ckpt/metadata", []byte("{}"), time.Now())
	noCredentials(t)
	tr, err := Translate("gs://public/ckpt?anonymous=true")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(tr.Bucket)
	drv, err := openGCS(u)
	if err != nil || !drv.anonymous || drv.endpoint != gcsEndpoint || drv.name != "public" {
		t.Fatalf("%s opened %+v, %v", tr.Bucket, drv, err)
	}
	drv.endpoint = srv.URL + "/storage/v1/"
	s := &bucketStore{b: drv, prefix: "ckpt/", loc: tr.Location}
	if _, err := s.ReadFile("metadata", 100); err != nil {
		t.Fatal(err)
	}
	if r := f.seen(); len(r) != 1 || r[0].auth != "" || r[0].path != "/storage/v1/b/public/o/ckpt%2Fmetadata" {
		t.Errorf("requests %+v, want one GET of ckpt%%2Fmetadata without Authorization", r)
	}
}

// With Application Default Credentials (here a service account key whose
// token endpoint is a test server), every request carries the token,
// asked for with the read-only scope, and the key is not looked at
// before the first read.
func TestGCSServiceAccount(t *testing.T) {
	f, srv := newFakeGCS(t)
	f.put("b", "metadata", []byte("{}"), time.Now())
	var tokens sync.Map
	tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		parts := strings.Split(r.PostForm.Get("assertion"), ".")
		var claims struct{ Scope string }
		if len(parts) == 3 {
			payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
			_ = json.Unmarshal(payload, &claims)
		}
		tokens.Store("scope", claims.Scope)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"tok-123","token_type":"Bearer","expires_in":3600}`)
	}))
	defer tokenSrv.Close()

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	keyFile := filepath.Join(t.TempDir(), "key.json")
	js, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "p", "private_key_id": "k1", "private_key": string(keyPEM),
		"client_email": "kbatch@p.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenSrv.URL,
	})
	if err := os.WriteFile(keyFile, js, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "not-yet.json"))

	drv, err := newGCSBucket("b", false, "")
	if err != nil {
		t.Fatal(err)
	}
	drv.endpoint = srv.URL + "/storage/v1/"
	s := &bucketStore{b: drv, loc: "gs://b"}
	// The key appears only now: nothing was looked up when the bucket opened.
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", keyFile)
	for range 2 {
		if _, err := s.ReadFile("metadata", 100); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range f.seen() {
		if r.auth != "Bearer tok-123" {
			t.Errorf("request %s sent Authorization %q", r.path, r.auth)
		}
	}
	if scope, _ := tokens.Load("scope"); scope != "https://www.googleapis.com/auth/devstorage.read_only" {
		t.Errorf("token asked for scope %q", scope)
	}
}

func TestTranslateGCSQuery(t *testing.T) {
	for in, want := range map[string]string{
		"gs://b/p?anonymous=true":  "gs://b?anonymous=true",
		"gs://b/p?anonymous=false": "gs://b?anonymous=false",
	} {
		if got, err := Translate(in); err != nil || got.Bucket != want {
			t.Errorf("Translate(%q) = %q, %v; want %q", in, got.Bucket, err, want)
		}
	}
	for in, want := range map[string]string{
		"gs://b/p?access_id=-":               `unknown query parameter access_id (gs:// takes anonymous=true)`,
		"gs://b/p?grpc=true":                 `unknown query parameter grpc`,
		"gs://b/p?anonymous=maybe":           `anonymous=maybe: want anonymous=true or false`,
		"gs://b/p?anonymous=true&anonymous=": `want anonymous=true or false, once`,
	} {
		_, err := Open(context.Background(), in)
		var ue *offsets.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "spark checkpoint gs://b/p: ") {
			t.Errorf("Open(%q) = %v, want a usage error with %q", in, err, want)
		}
	}
}
