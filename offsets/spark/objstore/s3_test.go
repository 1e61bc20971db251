package objstore

import (
	"context"
	"encoding/xml"
	"errors"
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
	"github.com/kbatch-dev/kbatch/record"
)

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
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	max, err := strconv.Atoi(q.Get("max-keys"))
	if err != nil || max <= 0 {
		max = 1000
	}
	var names []string
	for k := range objs {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			if i := strings.Index(rest, delim); delim != "" && i >= 0 {
				k = prefix + rest[:i+len(delim)]
			}
			if k > q.Get("continuation-token") {
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	type content struct{ Key, LastModified string }
	type common struct{ Prefix string }
	res := struct {
		XMLName               xml.Name `xml:"ListBucketResult"`
		Contents              []content
		CommonPrefixes        []common
		IsTruncated           bool
		NextContinuationToken string `xml:",omitempty"`
	}{}
	if len(names) > max {
		names = names[:max]
		res.IsTruncated, res.NextContinuationToken = true, names[max-1]
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
	dir := filepath.Join(fixtures.SparkCheckpoint(t), "kafka-0-10-sql", "structured-streaming", "checkpoint-version-2.4.3-kafka-include-headers-default")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		f.put("ckpt", "q/run1/"+filepath.ToSlash(rel), data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
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
