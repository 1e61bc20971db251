package objstore

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
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

func TestTranslate(t *testing.T) {
	t.Setenv("AZURE_STORAGE_DOMAIN", "")
	cases := []struct {
		in                     string
		location, bucket, pref string
	}{
		{"s3://ckpt/queries/orders", "s3://ckpt/queries/orders", "s3://ckpt", "queries/orders"},
		{"s3a://ckpt/queries/orders/", "s3a://ckpt/queries/orders", "s3://ckpt", "queries/orders"},
		{"s3://ckpt/q?endpoint=http%3A%2F%2F127.0.0.1%3A9000&use_path_style=true&region=us-east-1",
			"s3://ckpt/q", "s3://ckpt?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1&use_path_style=true", "q"},
		{"s3://ckpt", "s3://ckpt", "s3://ckpt", ""},
		{"gs://b/a//b/../c", "gs://b/a/c", "gs://b", "a/c"},
		{"abfss://ckpt@acct.dfs.core.windows.net/q1", "abfss://ckpt@acct.dfs.core.windows.net/q1",
			"azblob://ckpt?domain=blob.core.windows.net&storage_account=acct", "q1"},
		{"wasbs://ckpt@acct.blob.core.windows.net/q1", "wasbs://ckpt@acct.blob.core.windows.net/q1",
			"azblob://ckpt?domain=blob.core.windows.net&storage_account=acct", "q1"},
		{"wasb://ckpt@devstoreaccount1.blob.core.windows.net/q1?localemu=true&domain=127.0.0.1:10000&protocol=http",
			"wasb://ckpt@devstoreaccount1.blob.core.windows.net/q1",
			"azblob://ckpt?domain=127.0.0.1%3A10000&localemu=true&protocol=http&storage_account=devstoreaccount1", "q1"},
	}
	for _, c := range cases {
		got, err := Translate(c.in)
		if err != nil {
			t.Errorf("Translate(%q): %v", c.in, err)
			continue
		}
		if got.Location != c.location || got.Bucket != c.bucket || got.Prefix != c.pref {
			t.Errorf("Translate(%q) = %+v, want {%s %s %s}", c.in, got, c.location, c.bucket, c.pref)
		}
	}
}

// AZURE_STORAGE_DOMAIN (the default chain's way to a sovereign cloud, a
// private endpoint or Azurite) is not overridden by the domain of the URL's
// host, or against Azurite every abfss:// URL would go to
// blob.core.windows.net. A domain= on the URL still wins.
func TestTranslateAzureDomainFromEnv(t *testing.T) {
	t.Setenv("AZURE_STORAGE_DOMAIN", "127.0.0.1:10000")
	for in, want := range map[string]string{
		"abfss://ckpt@devstoreaccount1.dfs.core.windows.net/q1":              "azblob://ckpt?storage_account=devstoreaccount1",
		"wasbs://ckpt@devstoreaccount1.blob.core.windows.net/q1":             "azblob://ckpt?storage_account=devstoreaccount1",
		"wasbs://ckpt@acct.blob.core.windows.net/q1?domain=blob.example.com": "azblob://ckpt?domain=blob.example.com&storage_account=acct",
	} {
		got, err := Translate(in)
		if err != nil || got.Bucket != want {
			t.Errorf("Translate(%q) = %q, %v; want %q", in, got.Bucket, err, want)
		}
	}
}

func TestTranslateRefuses(t *testing.T) {
	cases := map[string]string{
		"ftp://host/ckpt":                            "unsupported scheme",
		"s3:///ckpt":                                 "no bucket",
		"s3://AKIA:secret@bucket/ckpt":               "credentials do not go in the URL",
		"abfss://acct.dfs.core.windows.net/q":        "want abfss://CONTAINER@ACCOUNT",
		"wasbs://c:key@acct.blob.core.windows.net/q": "want wasbs://CONTAINER@ACCOUNT",
		"gs://b/\x1b[31mred":                         "",
	}
	for in, want := range cases {
		_, err := Translate(in)
		if want == "" {
			// Quoted, raw; escaped once where the line is printed.
			if err != nil && !strings.Contains(err.Error(), `"gs://b/`+"\x1b[31mred\"") {
				t.Errorf("Translate(%q): error does not quote the location: %q", in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Translate(%q) = %v, want an error with %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Translate(%q): the error repeats the secret: %v", in, err)
		}
	}
}

func TestOpenUnknownSchemeIsUsage(t *testing.T) {
	_, err := Open(context.Background(), "hdfs://nn:8020/ckpt")
	var ue *offsets.UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("Open(hdfs://...) = %v, want a usage error", err)
	}
}

func TestIsURL(t *testing.T) {
	for in, want := range map[string]bool{
		"s3://b/p": true, "/data/ckpt": false, "ckpt": false, `C:\ckpt`: false, "rel/s3://x": true,
	} {
		if got := IsURL(in); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", in, got, want)
		}
	}
}

// A folder opens as a DirStore that sends no requests.
func TestOpenFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "metadata"), []byte(`{"id":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b, err := s.ReadFile("metadata", 100); err != nil || string(b) != `{"id":"x"}` {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if _, err := s.ReadFile("offsets/0", 100); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	if s.Requests() != 0 {
		t.Fatalf("a folder counted %d requests", s.Requests())
	}
}

// memBucket is a bucket in memory, listed as the stores list: names in
// order, folders ending in '/', at most pageSize per page.
type memBucket struct {
	mu      sync.Mutex
	objects map[string][]byte
}

func newMemBucket() *memBucket { return &memBucket{objects: map[string][]byte{}} }

func (m *memBucket) put(key string, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[key] = data
}

func (m *memBucket) list(_ context.Context, prefix, token string, pageSize int) ([]object, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var names []string
	for k := range m.objects {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				k = prefix + rest[:i+1]
			}
			if k > token {
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	next := ""
	if len(names) > pageSize {
		names = names[:pageSize]
		next = names[pageSize-1]
	}
	var out []object
	for _, n := range names {
		out = append(out, object{key: n, dir: strings.HasSuffix(n, "/"), modTime: time.Unix(1, 0)})
	}
	return out, next, nil
}

func (m *memBucket) read(_ context.Context, key string) (io.ReadCloser, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.objects[key]
	if !ok {
		return nil, 0, fs.ErrNotExist
	}
	return io.NopCloser(strings.NewReader(string(data))), int64(len(data)), nil
}

func (m *memBucket) stat(_ context.Context, key string) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objects[key]; !ok {
		return time.Time{}, fs.ErrNotExist
	}
	return time.Unix(1, 0), nil
}

// sparkCheckpoint is the folder of a checkpoint Spark 2.4.3 wrote.
func sparkCheckpoint(t *testing.T) string {
	return filepath.Join(fixtures.SparkCheckpoint(t), "kafka-0-10-sql", "structured-streaming", "checkpoint-version-2.4.3-kafka-include-headers-default")
}

// copyFolder hands put every file below dir, named by its slash-separated
// path relative to dir.
func copyFolder(t *testing.T, dir string, put func(name string, data []byte)) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		put(filepath.ToSlash(rel), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A checkpoint Spark wrote reads the same from a bucket as from the
// folder, with four requests for Open (metadata, two listings, the last
// commit).
func TestBucketStoreReadsLikeTheFolder(t *testing.T) {
	dir := sparkCheckpoint(t)
	b := newMemBucket()
	copyFolder(t, dir, func(name string, data []byte) { b.put("ckpt/q1/"+name, data) })
	readsLikeTheFolder(t, &bucketStore{b: b, prefix: "ckpt/q1/", loc: "mem://ckpt/q1"}, dir)
}

// readsLikeTheFolder checks that s, holding a copy of the checkpoint in
// dir, reads as the folder does, with four requests for spark.OpenStore.
func readsLikeTheFolder(t *testing.T, s *bucketStore, dir string) {
	t.Helper()
	fromDisk, err := spark.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fromBlob, err := spark.OpenStore(s)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Requests(); n != 4 {
		t.Errorf("Open sent %d requests, want 4", n)
	}
	if fromBlob.ID != fromDisk.ID || !slices.Equal(fromBlob.Batches, fromDisk.Batches) || !slices.Equal(fromBlob.Commits, fromDisk.Commits) || fromBlob.Committed != fromDisk.Committed {
		t.Fatalf("bucket %+v, folder %+v", fromBlob, fromDisk)
	}
	for _, id := range fromDisk.Batches {
		want, err := fromDisk.Batch(id, -1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fromBlob.Batch(id, -1)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got.Start, want.Start) || !maps.Equal(got.End, want.End) || got.Committed != want.Committed {
			t.Errorf("batch %d: bucket %+v, folder %+v", id, got, want)
		}
	}
	if _, ok := fromBlob.FileTime("offsets", 0); !ok {
		t.Error("no modification time from the bucket's listing")
	}
	wantPos, _ := fromDisk.CommittedOffsets(-1)
	gotPos, err := fromBlob.CommittedOffsets(-1)
	if err != nil || !maps.Equal(gotPos.Offsets, wantPos.Offsets) {
		t.Fatalf("committed offsets: bucket %v (%v), folder %v", gotPos.Offsets, err, wantPos.Offsets)
	}
	if _, err := s.ReadFile("offsets/9", 100); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), s.Path("offsets/9")) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := s.ReadDir("nothing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing folder: %v", err)
	}
}

// A log folder longer than a page is listed page by page, one request
// each, and a file over the limit is refused.
func TestBucketStorePagesAndLimits(t *testing.T) {
	b := newMemBucket()
	for i := range 2500 {
		b.put("offsets/"+strconv.Itoa(i), []byte("v1\n{}\n"))
	}
	b.put("offsets/sub/deeper", []byte("x"))
	b.put("big", make([]byte, 2048))
	s := &bucketStore{b: b, loc: "mem://b"}
	ents, err := s.ReadDir("offsets")
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2501 || s.Requests() != 3 {
		t.Fatalf("%d entries in %d requests, want 2501 (2500 files and sub/) in 3", len(ents), s.Requests())
	}
	if _, err := s.ReadFile("big", 1024); err == nil || !strings.Contains(err.Error(), "not a checkpoint file") {
		t.Fatalf("a file over the limit: %v", err)
	}
}

// endlessBucket answers every listing with one more name and "there is
// more", under a new token or always the same one.
type endlessBucket struct {
	memBucket
	sameToken bool
	calls     int
}

func (e *endlessBucket) list(_ context.Context, prefix, token string, _ int) ([]object, string, error) {
	e.calls++
	next := "t" + strconv.Itoa(e.calls)
	if e.sameToken {
		next = "t"
	}
	return []object{{key: prefix + strconv.Itoa(e.calls)}}, next, nil
}

// A store whose listing never ends, or repeats its page token, is an
// error after a bounded number of requests, not a loop.
func TestBucketStoreListingEnds(t *testing.T) {
	for _, same := range []bool{false, true} {
		b := &endlessBucket{sameToken: same}
		s := &bucketStore{b: b, loc: "mem://b"}
		_, err := s.ReadDir("offsets")
		if err == nil || b.calls > maxPages || (same && b.calls != 2) {
			t.Errorf("same token %v: %v after %d requests", same, err, b.calls)
		}
	}
}

// listPage is one page of a listing as the object stores answer it: the
// names under prefix, each cut after the first delim past prefix (a
// folder, listed once), sorted, those after the token after, at most max
// of them (max <= 0: all). next is the last entry when more follow, else "".
func listPage(names []string, prefix, delim, after string, max int) (page []string, next string) {
	for _, name := range names {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if i := strings.Index(rest, delim); delim != "" && i >= 0 {
			name = prefix + rest[:i+len(delim)]
		}
		if name > after {
			page = append(page, name)
		}
	}
	slices.Sort(page)
	page = slices.Compact(page)
	if max > 0 && len(page) > max {
		page = page[:max]
		next = page[max-1]
	}
	return page, next
}

// azureKey is a made-up account key (base64 of 64 bytes).
var azureKey = base64.StdEncoding.EncodeToString([]byte(strings.Repeat("kbatch-test-key!", 4)))

// fakeAzure serves List Blobs (prefix, delimiter, maxresults, marker), Get
// Blob and Get Blob Properties of account "devstoreaccount1" as an
// emulator does (http://HOST/ACCOUNT/CONTAINER/BLOB), checking each Shared
// Key signature against the string to sign it rebuilds from the request
// the way Azure's documentation says.
type fakeAzure struct {
	mu       sync.Mutex
	blobs    map[string][]byte // "container/name"
	requests []*http.Request
	badAuth  int
}

func (f *fakeAzure) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	if auth := r.Header.Get("Authorization"); auth != "" && auth != "SharedKey devstoreaccount1:"+docSignature(r) {
		f.badAuth++
		azureFail(w, http.StatusForbidden, "AuthenticationFailed", "Server failed to authenticate the request.\nRequestId:1")
		return
	}
	rest := strings.TrimPrefix(r.URL.EscapedPath(), "/devstoreaccount1/")
	container, blob, _ := strings.Cut(rest, "/")
	if container == "locked" {
		azureFail(w, http.StatusForbidden, "AuthorizationFailure", "This request is not authorized\u202e.\nRequestId:2")
		return
	}
	if blob == "" {
		f.list(w, container, r.URL.Query())
		return
	}
	name, _ := url.PathUnescape(blob)
	data, ok := f.blobs[container+"/"+name]
	if !ok {
		w.Header().Set("x-ms-error-code", "BlobNotFound")
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		azureFail(w, http.StatusNotFound, "BlobNotFound", "The specified blob does not exist.")
		return
	}
	w.Header().Set("Last-Modified", "Mon, 30 Nov 2026 12:00:00 GMT")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(data)
	}
}

func azureFail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
}

func (f *fakeAzure) list(w http.ResponseWriter, container string, q url.Values) {
	var all []string
	for k := range f.blobs {
		if c, name, _ := strings.Cut(k, "/"); c == container {
			all = append(all, name)
		}
	}
	max, _ := strconv.Atoi(q.Get("maxresults"))
	names, next := listPage(all, q.Get("prefix"), "/", q.Get("marker"), max)
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?><EnumerationResults><Blobs>`)
	for _, n := range names {
		if strings.HasSuffix(n, "/") {
			fmt.Fprintf(&b, "<BlobPrefix><Name>%s</Name></BlobPrefix>", n)
		} else {
			fmt.Fprintf(&b, "<Blob><Name>%s</Name><Properties><Last-Modified>Mon, 30 Nov 2026 12:00:00 GMT</Last-Modified></Properties></Blob>", n)
		}
	}
	fmt.Fprintf(&b, "</Blobs><NextMarker>%s</NextMarker></EnumerationResults>", next)
	_, _ = w.Write([]byte(b.String()))
}

// docSignature is the Shared Key signature of r as Azure's documentation
// spells the string to sign for a request without a body or standard
// headers (authorize-with-shared-key: Blob service, version 2009-09-19 and
// later): the verb, ten empty header lines (Content-Encoding to
// If-Unmodified-Since, Date empty as x-ms-date is sent), Range, the x-ms- headers
// sorted, then /ACCOUNT/PATH and each query parameter, lower-case, sorted,
// as name:value.
func docSignature(r *http.Request) string {
	var lines []string
	lines = append(lines, r.Method)
	for range 10 {
		lines = append(lines, "")
	}
	lines = append(lines, r.Header.Get("Range"))
	lines = append(lines, "x-ms-date:"+r.Header.Get("x-ms-date"), "x-ms-version:"+r.Header.Get("x-ms-version"))
	res := "/devstoreaccount1" + r.URL.EscapedPath()
	q := r.URL.Query()
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range q {
			if !yield(k) {
				return
			}
		}
	}) {
		res += "\n" + k + ":" + strings.Join(q[k], ",")
	}
	lines = append(lines, res)
	key, _ := base64.StdEncoding.DecodeString(azureKey)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(strings.Join(lines, "\n")))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// azureEmulator points the environment at f as scripts/objstore-up.sh
// does for Azurite, with the Shared Key of azureKey.
func azureEmulator(t *testing.T, f *fakeAzure) *httptest.Server {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	for k, v := range map[string]string{
		"AZURE_STORAGE_ACCOUNT": "devstoreaccount1", "AZURE_STORAGE_KEY": azureKey,
		"AZURE_STORAGE_DOMAIN": strings.TrimPrefix(srv.URL, "http://"), "AZURE_STORAGE_PROTOCOL": "http",
		"AZURE_STORAGE_IS_LOCAL_EMULATOR": "true", "AZURE_STORAGE_SAS_TOKEN": "", "AZURE_STORAGE_CONNECTION_STRING": "",
		"AZURE_STORAGEBLOB_CONNECTIONSTRING": "", "AZURE_STORAGE_IS_CDN": "",
	} {
		t.Setenv(k, v)
	}
	return srv
}

// Listings page by page, reads and lookups go to the emulator's path,
// each signed with the account key; missing blobs and containers are
// fs.ErrNotExist; a refusal is one escaped line with Azure's code.
func TestAzureSharedKey(t *testing.T) {
	f := &fakeAzure{blobs: map[string][]byte{}}
	azureEmulator(t, f)
	for i := range 1500 {
		f.blobs["ckpt/q1/offsets/"+strconv.Itoa(i)] = []byte("v1\n{}\n")
	}
	f.blobs["ckpt/q1/offsets/sub/x"] = []byte("x")
	f.blobs["ckpt/q1/metadata"] = []byte(`{"id":"a b"}`)
	s := openFake(t, "abfss://ckpt@devstoreaccount1.dfs.core.windows.net/q1")
	readDirPaged(t, s, 1501, 2)
	if b, err := s.ReadFile("metadata", 100); err != nil || string(b) != `{"id":"a b"}` {
		t.Fatalf("ReadFile(metadata) = %q, %v", b, err)
	}
	if e, err := s.Stat("metadata"); err != nil || !e.ModTime.Equal(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("Stat(metadata) = %+v, %v", e, err)
	}
	if _, err := s.ReadFile("offsets/x", 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing blob: %v", err)
	}
	if _, err := s.Stat("offsets/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing blob: %v", err)
	}
	if f.badAuth != 0 {
		t.Errorf("%d requests carried a signature other than the documented one", f.badAuth)
	}
	for _, r := range f.requests {
		if !strings.HasPrefix(r.URL.Path, "/devstoreaccount1/ckpt") || r.Header.Get("x-ms-version") == "" {
			t.Errorf("request %s %s", r.Method, r.URL)
		}
	}
	_, err := openFake(t, "wasb://locked@devstoreaccount1.blob.core.windows.net/q").ReadFile("metadata", 100)
	if err == nil || errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "\n") || strings.ContainsAny(record.String(err.Error()), "\u202e\n") ||
		!strings.Contains(err.Error(), "Azure Blob Storage answered 403 Forbidden (AuthorizationFailure): This request is not authorized") {
		t.Errorf("403: %v", err)
	}
}

// A SAS token (AZURE_STORAGE_SAS_TOKEN, or a connection string's) is
// sent in the query and nothing is signed; a connection string's
// BlobEndpoint is the service.
func TestAzureSASAndConnectionString(t *testing.T) {
	f := &fakeAzure{blobs: map[string][]byte{"ckpt/q/metadata": []byte("{}")}}
	srv := azureEmulator(t, f)
	t.Setenv("AZURE_STORAGE_KEY", "")
	t.Setenv("AZURE_STORAGE_SAS_TOKEN", "?sv=2023-11-03&sig=abc%2F")
	if _, err := openFake(t, "wasb://ckpt@devstoreaccount1.blob.core.windows.net/q").ReadFile("metadata", 100); err != nil {
		t.Fatal(err)
	}
	r := f.requests[len(f.requests)-1]
	if r.Header.Get("Authorization") != "" || r.URL.Query().Get("sig") != "abc/" {
		t.Errorf("SAS request %s with Authorization %q", r.URL, r.Header.Get("Authorization"))
	}

	t.Setenv("AZURE_STORAGE_SAS_TOKEN", "")
	t.Setenv("AZURE_STORAGE_ACCOUNT", "")
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+azureKey+";BlobEndpoint="+srv.URL+"/devstoreaccount1;")
	if _, err := openFake(t, "wasb://ckpt@devstoreaccount1.blob.core.windows.net/q").ReadFile("metadata", 100); err != nil || f.badAuth != 0 {
		t.Fatalf("connection string: %v (%d bad signatures)", err, f.badAuth)
	}
}

func TestAzureServiceURL(t *testing.T) {
	for _, c := range []struct {
		s    azureSettings
		want string
	}{
		{azureSettings{account: "acct"}, "https://acct.blob.core.windows.net"},
		{azureSettings{account: "acct", domain: "blob.core.chinacloudapi.cn"}, "https://acct.blob.core.chinacloudapi.cn"},
		{azureSettings{account: "acct", domain: "blob.core.windows.net", cdn: true}, "https://blob.core.windows.net"},
		{azureSettings{account: "dev1", domain: "127.0.0.1:10000", protocol: "http", emulator: true}, "http://127.0.0.1:10000/dev1"},
		{azureSettings{account: "dev1", domain: "localhost:10000", protocol: "http", emulator: true}, "http://localhost:10000/dev1"},
	} {
		if got, err := c.s.serviceURL(); got != c.want || err != nil {
			t.Errorf("%+v: %q, %v; want %s", c.s, got, err, c.want)
		}
	}
	// A credential is sent to Azure's clouds or the loopback only.
	for _, s := range []azureSettings{
		{account: "acct", domain: "blob.evil.example"},
		{account: "acct", domain: "10.0.0.1:10000", protocol: "http", emulator: true},
		{account: "acct", protocol: "http"},
		{account: "a.b"},
		{},
	} {
		if got, err := s.serviceURL(); err == nil {
			t.Errorf("%+v: %q, want an error", s, got)
		}
	}
}

// An unknown query parameter is a usage error.
func TestAzureQuery(t *testing.T) {
	azureEmulator(t, &fakeAzure{})
	_, err := Open(context.Background(), "abfss://c@acct.dfs.core.windows.net/q?sas=x")
	var ue *offsets.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "unknown query parameter sas") {
		t.Errorf("Open with sas= = %v, want a usage error", err)
	}
}

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
	max, err := strconv.Atoi(q.Get("maxResults"))
	if err != nil || max <= 0 {
		max = 1000
	}
	entries, next := listPage(slices.Collect(maps.Keys(objs)), q.Get("prefix"), q.Get("delimiter"), q.Get("pageToken"), max)
	res := map[string]any{"kind": "storage#objects"}
	if next != "" {
		res["nextPageToken"] = next
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
	dir := sparkCheckpoint(t)
	updated := time.Date(2026, 11, 30, 12, 0, 0, 250e6, time.UTC)
	copyFolder(t, dir, func(name string, data []byte) { f.put("ckpt", "q/run1/"+name, data, updated) })
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

// fakeS3 serves what s3Bucket sends — ListObjectsV2 (prefix, delimiter,
// max-keys, continuation-token), GET and HEAD of an object — path-style,
// from objects in memory, answering errors in S3's XML shape, and records
// every request.
type fakeS3 struct {
	mu       sync.Mutex
	buckets  map[string]map[string][]byte
	modTime  time.Time
	status   map[string]int // bucket → the status every request answers
	requests []*http.Request
}

func newFakeS3(t *testing.T) (*fakeS3, *httptest.Server) {
	f := &fakeS3{buckets: map[string]map[string][]byte{}, status: map[string]int{}, modTime: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeS3) put(bucket, key string, data []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.buckets[bucket] == nil {
		f.buckets[bucket] = map[string][]byte{}
	}
	f.buckets[bucket][key] = data
}

func (f *fakeS3) seen() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func s3Fail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code + `</Code><Message>` + msg + `</Message></Error>`))
}

func (f *fakeS3) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r)
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if st := f.status[bucket]; st != 0 {
		if st == http.StatusMovedPermanently {
			w.Header().Set("X-Amz-Bucket-Region", "eu-west-3")
		}
		s3Fail(w, st, "AccessDenied", "Access Denied\u202e\u009b2J")
		return
	}
	objs, ok := f.buckets[bucket]
	if !ok {
		s3Fail(w, http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
		return
	}
	if key == "" {
		f.list(w, objs, r.URL.Query())
		return
	}
	data, ok := objs[key]
	if !ok {
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		s3Fail(w, http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
		return
	}
	w.Header().Set("Last-Modified", f.modTime.Format(http.TimeFormat))
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(data)
	}
}

func (f *fakeS3) list(w http.ResponseWriter, objs map[string][]byte, q url.Values) {
	max, err := strconv.Atoi(q.Get("max-keys"))
	if err != nil || max <= 0 {
		max = 1000
	}
	names, next := listPage(slices.Collect(maps.Keys(objs)), q.Get("prefix"), q.Get("delimiter"), q.Get("continuation-token"), max)
	type content struct{ Key, LastModified string }
	type common struct{ Prefix string }
	res := struct {
		XMLName               xml.Name `xml:"ListBucketResult"`
		Contents              []content
		CommonPrefixes        []common
		IsTruncated           bool
		NextContinuationToken string `xml:",omitempty"`
	}{}
	if next != "" {
		res.IsTruncated, res.NextContinuationToken = true, next
	}
	for _, n := range names {
		if _, ok := objs[n]; ok {
			res.Contents = append(res.Contents, content{n, f.modTime.Format(time.RFC3339)})
		} else {
			res.CommonPrefixes = append(res.CommonPrefixes, common{n})
		}
	}
	w.Header().Set("Content-Type", "application/xml")
	_ = xml.NewEncoder(w).Encode(res)
}

// awsEnv points the AWS default chain at srv with a static key, and at no
// file of this machine's.
func awsEnv(t *testing.T, srv *httptest.Server) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIDKBATCH", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "",
		"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "", "AWS_PROFILE": "", "AWS_ENDPOINT_URL": "",
		"AWS_ENDPOINT_URL_S3": srv.URL, "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": filepath.Join(dir, "config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
	} {
		t.Setenv(k, v)
	}
}

// A checkpoint Spark wrote reads the same from S3 as from the folder, with
// four requests for Open, each signed with Signature Version 4 for S3 in
// the region, and addressed path-style: the endpoint is an IP address.
func TestS3ReadsLikeTheFolder(t *testing.T) {
	f, srv := newFakeS3(t)
	awsEnv(t, srv)
	dir := sparkCheckpoint(t)
	copyFolder(t, dir, func(name string, data []byte) { f.put("ckpt", "q/run1/"+name, data) })
	s := openFake(t, "s3a://ckpt/q/run1")
	if n := len(f.seen()); n != 0 {
		t.Fatalf("Open sent %d requests, want none", n)
	}
	readsLikeTheFolder(t, s, dir)
	if e, err := s.Stat("offsets/0"); err != nil || !e.ModTime.Equal(f.modTime) {
		t.Errorf("Stat(offsets/0) = %+v, %v; want the object's time %v", e, err, f.modTime)
	}
	for _, r := range f.seen() {
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDKBATCH/") || !strings.Contains(auth, "/us-east-1/s3/aws4_request") ||
			r.Header.Get("X-Amz-Content-Sha256") != emptySHA256 || r.URL.Path != "/ckpt" && !strings.HasPrefix(r.URL.Path, "/ckpt/q/run1/") {
			t.Fatalf("%s %s: Authorization %q, X-Amz-Content-Sha256 %q", r.Method, r.URL, auth, r.Header.Get("X-Amz-Content-Sha256"))
		}
	}
}

// A folder longer than a page is listed page by page, each request asking
// for the next; a missing bucket or object is fs.ErrNotExist; a refusal
// says S3's code and message in one line, escaped, and a bucket in another
// region names it.
func TestS3PagesAndErrors(t *testing.T) {
	f, srv := newFakeS3(t)
	awsEnv(t, srv)
	for i := range 2500 {
		f.put("b", "offsets/"+strconv.Itoa(i), []byte("v1\n{}\n"))
	}
	f.put("b", "offsets/sub/deeper", []byte("x"))
	s := openFake(t, "s3://b")
	readDirPaged(t, s, 2501, 3)
	for i, r := range f.seen() {
		q := r.URL.Query()
		if q.Get("list-type") != "2" || q.Get("prefix") != "offsets/" || q.Get("delimiter") != "/" || q.Get("max-keys") != "1000" || (i > 0) != (q.Get("continuation-token") != "") {
			t.Errorf("listing request %d: %s", i+1, r.URL.RawQuery)
		}
	}
	if _, err := s.ReadFile("offsets/9999", 100); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "s3://b/offsets/9999") {
		t.Errorf("missing object: %v", err)
	}
	if _, err := s.Stat("offsets/9999"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a missing object: %v", err)
	}
	if _, err := openFake(t, "s3://nobucket/q").ReadFile("metadata", 100); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing bucket: %v", err)
	}

	f.status["closed"] = http.StatusForbidden
	_, err := openFake(t, "s3://closed/q").ReadFile("metadata", 100)
	if err == nil || errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "\n") || strings.ContainsAny(record.String(err.Error()), "\u202e\u009b\n") ||
		!strings.Contains(err.Error(), "S3 answered 403 Forbidden (AccessDenied): Access Denied") {
		t.Errorf("403: %v", err)
	}
	f.status["far"] = http.StatusMovedPermanently
	if _, err := openFake(t, "s3://far/q").ReadDir("offsets"); err == nil || !strings.Contains(err.Error(), "pass region=eu-west-3") {
		t.Errorf("a bucket in another region: %v", err)
	}
}

// anonymous=true sends no credentials.
func TestS3Anonymous(t *testing.T) {
	f, srv := newFakeS3(t)
	awsEnv(t, srv)
	f.put("public", "ckpt/metadata", []byte("{}"))
	if _, err := openFake(t, "s3://public/ckpt?anonymous=true").ReadFile("metadata", 100); err != nil {
		t.Fatal(err)
	}
	if r := f.seen(); len(r) != 1 || r[0].Header.Get("Authorization") != "" || r[0].URL.Path != "/public/ckpt/metadata" {
		t.Errorf("requests %+v, want one unsigned GET of /public/ckpt/metadata", r)
	}
}

func TestS3BucketURL(t *testing.T) {
	cases := []struct {
		bucket, region, endpoint string
		pathStyle                bool
		want                     string
	}{
		{"ckpt", "eu-west-1", "", false, "https://ckpt.s3.eu-west-1.amazonaws.com"},
		{"ckpt", "cn-north-1", "", false, "https://ckpt.s3.cn-north-1.amazonaws.com.cn"},
		{"my.ckpt", "eu-west-1", "", false, "https://s3.eu-west-1.amazonaws.com/my.ckpt"},
		{"Ckpt_1", "eu-west-1", "", false, "https://s3.eu-west-1.amazonaws.com/Ckpt_1"},
		{"ckpt", "us-east-1", "http://127.0.0.1:9000", false, "http://127.0.0.1:9000/ckpt"},
		{"ckpt", "us-east-1", "http://[::1]:9000/", false, "http://[::1]:9000/ckpt"},
		{"ckpt", "us-east-1", "http://minio.internal:9000", false, "http://ckpt.minio.internal:9000"},
		{"my.ckpt", "us-east-1", "http://minio.internal:9000", false, "http://my.ckpt.minio.internal:9000"},
		{"ckpt", "us-east-1", "http://localhost:9000", true, "http://localhost:9000/ckpt"},
	}
	for _, c := range cases {
		u, err := s3BucketURL(c.bucket, c.region, c.endpoint, c.pathStyle)
		if err != nil || u.String() != c.want {
			t.Errorf("s3BucketURL(%q, %q, %q, %v) = %v, %v; want %s", c.bucket, c.region, c.endpoint, c.pathStyle, u, err, c.want)
		}
	}
	if _, err := s3BucketURL("b", "r", "ftp://x", false); err == nil {
		t.Error("an ftp:// endpoint was taken")
	}
}

// Keys are sent escaped as Signature Version 4 signs them.
func TestS3EscapePath(t *testing.T) {
	if got := s3EscapePath("/b/q 1/offsets/0+x=ü"); got != "/b/q%201/offsets/0%2Bx%3D%C3%BC" {
		t.Errorf("s3EscapePath = %q", got)
	}
}

// A query parameter kbatch does not read is a usage error, and no region
// anywhere is said in one line.
func TestS3QueryAndRegion(t *testing.T) {
	_, srv := newFakeS3(t)
	awsEnv(t, srv)
	for in, want := range map[string]string{
		"s3://b/p?fips=true":           "unknown query parameter fips",
		"s3://b/p?use_path_style=yes!": "use_path_style=",
		"s3://b/p?endpoint=ftp://x":    "S3 endpoint ftp://x",
	} {
		_, err := Open(context.Background(), in)
		var ue *offsets.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "spark checkpoint s3://b/p: ") {
			t.Errorf("Open(%q) = %v, want a usage error with %q", in, err, want)
		}
	}
	t.Setenv("AWS_REGION", "")
	if _, err := Open(context.Background(), "s3://b/p"); err == nil || !strings.Contains(err.Error(), "no AWS region") {
		t.Errorf("no region: %v", err)
	}
}
