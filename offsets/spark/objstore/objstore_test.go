package objstore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
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
