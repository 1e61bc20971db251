package schema

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// TestManyRecordsOneFetchOneDiskWrite: decoding many records of each
// format asks the registry for each id once and writes each id to the
// disk cache once; after that, records decode from memory alone. With
// the registry failing and every cached file replaced by garbage, a
// second thousand records of each id still decode (a per-record disk read
// would meet the garbage, drop it and ask the failing registry), and the
// garbage is still there afterwards (a per-record write would replace
// it).
func TestManyRecordsOneFetchOneDiskWrite(t *testing.T) {
	reg := newFakeRegistry(t)
	target, err := url.Parse(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	var mu sync.Mutex
	hits := map[string]int{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		if down.Load() {
			http.Error(w, `{"message":"down"}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	d := newDecoder(t, Options{RegistryURL: srv.URL, CacheDir: dir})
	line := protoFiles(t).Messages().ByName("Order").Messages().ByName("Line")
	cases := []struct {
		id   int
		b    []byte
		want string
	}{
		{reg.avroID, frame(reg.avroID, avroOrderBytes(t)), avroOrderJSON},
		{reg.protoID, frame(reg.protoID, append(protoIndexes(1, 0), protoBytes(t, line, `{"sku":"Q"}`)...)), `{"sku":"Q"}`},
		{reg.jsonID, frame(reg.jsonID, []byte(`{"name":"A","age":1}`)), `{"name":"A","age":1}`},
	}
	const n = 1000
	decodeAll := func() {
		t.Helper()
		for i := range n {
			for _, c := range cases {
				if r := d.Decode("orders", i%2 == 0, c.b); r.Status != Decoded || r.JSON != c.want {
					t.Fatalf("record %d of id %d: %v %q %s", i, c.id, r.Status, r.Reason, r.JSON)
				}
			}
		}
	}
	decodeAll()
	mu.Lock()
	for _, c := range cases {
		if got := hits["/schemas/ids/"+itoa(c.id)]; got != 1 {
			t.Errorf("schema id %d fetched %d times over %d records, want once", c.id, got, 2*n)
		}
	}
	mu.Unlock()

	sub := cacheDirFor(dir, srv.URL)
	entries, err := os.ReadDir(sub)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(cases) {
		t.Fatalf("disk cache holds %d files, want one per id (%d)", len(entries), len(cases))
	}
	const garbage = "not a cached schema"
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(sub, itoa(c.id)+".json"), []byte(garbage), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	down.Store(true)
	mu.Lock()
	clear(hits)
	mu.Unlock()
	decodeAll()
	mu.Lock()
	if len(hits) != 0 {
		t.Errorf("cached ids asked the registry again: %v", hits)
	}
	mu.Unlock()
	for _, c := range cases {
		b, err := os.ReadFile(filepath.Join(sub, itoa(c.id)+".json"))
		if err != nil || string(b) != garbage {
			t.Errorf("cache file of id %d rewritten while decoding from memory (%v)", c.id, err)
		}
	}
}
