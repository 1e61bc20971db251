package objstore

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

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
	prefix := q.Get("prefix")
	max, _ := strconv.Atoi(q.Get("maxresults"))
	var names []string
	for k := range f.blobs {
		c, name, _ := strings.Cut(k, "/")
		rest, ok := strings.CutPrefix(name, prefix)
		if c != container || !ok {
			continue
		}
		if i := strings.Index(rest, "/"); i >= 0 {
			name = prefix + rest[:i+1]
		}
		if name > q.Get("marker") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	next := ""
	if max > 0 && len(names) > max {
		names = names[:max]
		next = names[max-1]
	}
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
