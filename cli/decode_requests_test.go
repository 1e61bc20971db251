package cli

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// countingRegistry sits in front of a fake registry and counts the
// requests per path; down makes it answer 503 to everything.
type countingRegistry struct {
	srv  *httptest.Server
	down atomic.Bool
	mu   sync.Mutex
	hits map[string]int
}

func newCountingRegistry(t *testing.T, target string) *countingRegistry {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &countingRegistry{hits: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.hits[r.Method+" "+r.URL.Path]++
		c.mu.Unlock()
		if c.down.Load() {
			http.Error(w, `{"message":"down for the test"}`, http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// take returns the counts so far and starts counting again.
func (c *countingRegistry) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hits
	c.hits = map[string]int{}
	return h
}

// TestReplayDecodeAsksRegistryOncePerID: replay --decode over many records
// of three partitions, keys and values framed with two schema ids, asks
// the registry for each id once (its schema, and the subjects naming it),
// whatever the number of records, and writes each id to the disk cache
// next to the store once. A second replay then decodes every record from
// that cache with the registry failing, without asking it anything. This
// is the behaviour that keeps replay --decode from waiting on the
// registry per record.
func TestReplayDecodeAsksRegistryOncePerID(t *testing.T) {
	tc := testkafka.New(t)
	reg := srfake.New()
	t.Cleanup(reg.Close)
	valueID, _, err := reg.RegisterSchema("bulk-value", sr.Schema{Schema: decodeTestSchema})
	if err != nil {
		t.Fatal(err)
	}
	const keySchema = `{"type":"record","name":"Key","namespace":"shop","fields":[{"name":"n","type":"long"}]}`
	keyID, _, err := reg.RegisterSchema("bulk-key", sr.Schema{Schema: keySchema})
	if err != nil {
		t.Fatal(err)
	}
	vs, ks := avro.MustParse(decodeTestSchema), avro.MustParse(keySchema)
	const parts, perPart = 3, 400
	topic := tc.Topic("bulk", parts)
	var recs []*kgo.Record
	for i := range parts * perPart {
		k, err := avro.Marshal(ks, map[string]any{"n": int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		v, err := avro.Marshal(vs, map[string]any{"id": int64(i), "customer": "c" + strconv.Itoa(i), "note": nil})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % parts), Key: framed(keyID, k), Value: framed(valueID, v)})
	}
	tc.Produce(recs...)

	cr := newCountingRegistry(t, reg.URL())
	dir := t.TempDir()
	store := filepath.Join(dir, "offsets.db")
	replayOnce := func(run string) {
		t.Helper()
		out := filepath.Join(dir, run+".jsonl")
		_, stderr, code := runReplayCLI(t, tc, topic+":*:earliest-latest", "--out", out, "--decode", "--registry", cr.srv.URL, "--store", store)
		if code != 0 || strings.Contains(stderr, "warning") {
			t.Fatalf("%s: exit %d, stderr %q", run, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		lines := jsonLines(t, string(data))
		if len(lines) != parts*perPart {
			t.Fatalf("%s: %d lines, want %d", run, len(lines), parts*perPart)
		}
		for i, l := range lines {
			if string(l["value_schema_id"]) != strconv.Itoa(valueID) || string(l["key_schema_id"]) != strconv.Itoa(keyID) ||
				l["value_decoded"] == nil || l["key_decoded"] == nil || l["value_decode_error"] != nil || l["key_decode_error"] != nil {
				t.Fatalf("%s: line %d not decoded: %v", run, i, l)
			}
		}
	}

	replayOnce("first")
	hits := cr.take()
	for _, id := range []int{keyID, valueID} {
		if n := hits["GET /schemas/ids/"+strconv.Itoa(id)]; n != 1 {
			t.Errorf("schema id %d fetched %d times over %d records, want once", id, n, parts*perPart)
		}
	}
	for path, n := range hits {
		ok := false
		for _, id := range []int{keyID, valueID} {
			ok = ok || path == "GET /schemas/ids/"+strconv.Itoa(id) || path == "GET /schemas/ids/"+strconv.Itoa(id)+"/versions"
		}
		if !ok || n != 1 {
			t.Errorf("registry asked %s %d times; want only each id's schema and versions, once", path, n)
		}
	}
	cache, err := filepath.Glob(filepath.Join(dir, "schemas", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range cache {
		names = append(names, filepath.Base(p))
	}
	sort.Strings(names)
	want := []string{strconv.Itoa(keyID) + ".json", strconv.Itoa(valueID) + ".json"}
	sort.Strings(want)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("disk cache next to the store holds %v, want %v", names, want)
	}

	cr.down.Store(true)
	replayOnce("second")
	if hits := cr.take(); len(hits) != 0 {
		t.Errorf("second replay asked the registry %v; want nothing, the disk cache has both ids", hits)
	}
}
