package cli

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
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
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

const decodeTestSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"id","type":"long"},{"name":"customer","type":"string"},{"name":"note","type":["null","string"],"default":null}]}`

// framed is the Confluent wire format: a zero byte, the schema id, payload.
func framed(id int, payload []byte) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(id))
	return append(b, payload...)
}

// decodeTopic produces, into a new topic: 0 an Avro-framed value with a
// plain key, 1 a plain value, 2 a value framed with an id the registry
// does not know, 3 a framed value whose bytes are not an Order. It
// returns the topic and the registered schema id.
func decodeTopic(t *testing.T, tc *testkafka.Cluster, reg *srfake.Registry) (string, int) {
	t.Helper()
	id := registered(t, reg, "orders-value", decodeTestSchema)
	payload := orderPayload(t)
	topic := tc.Topic("decode", 1)
	tc.Produce(
		&kgo.Record{Topic: topic, Partition: 0, Key: []byte("k1"), Value: framed(id, payload)},
		&kgo.Record{Topic: topic, Partition: 0, Key: []byte("k2"), Value: []byte(`{"plain":true}`)},
		&kgo.Record{Topic: topic, Partition: 0, Value: framed(999, payload)},
		&kgo.Record{Topic: topic, Partition: 0, Value: framed(id, []byte{0xff, 0xff, 0xff})},
	)
	return topic, id
}

// orderPayload is the Avro payload of the test order.
func orderPayload(t *testing.T) []byte {
	t.Helper()
	payload, err := avro.Marshal(avro.MustParse(decodeTestSchema), map[string]any{"id": int64(42), "customer": "Ada \x1b[31m\u202e", "note": map[string]any{"string": "door"}})
	if err != nil {
		t.Fatal(err)
	}
	return payload
}

// rawValueOf is the lossless raw value of a record line (value or
// value_b64), nil when it has neither.
func rawValueOf(t *testing.T, l map[string]json.RawMessage) []byte {
	t.Helper()
	if v, ok := l["value_b64"]; ok {
		b, err := base64.StdEncoding.DecodeString(str(t, v))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if v, ok := l["value"]; ok && string(v) != "null" {
		return []byte(str(t, v))
	}
	return nil
}

func jsonLines(t *testing.T, text string) []map[string]json.RawMessage {
	t.Helper()
	var out []map[string]json.RawMessage
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func str(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s is not a string: %v", raw, err)
	}
	return s
}

// checkDecodedLines checks the four records of decodeTopic as --decode
// writes them with a working registry.
func checkDecodedLines(t *testing.T, lines []map[string]json.RawMessage, id int, rawValue []byte) {
	t.Helper()
	if len(lines) != 4 {
		t.Fatalf("%d record lines, want 4: %v", len(lines), lines)
	}
	l := lines[0]
	if got, want := string(l["value_decoded"]), `{"id":42,"customer":"Ada \u001b[31m\u202e","note":"door"}`; got != want {
		t.Errorf("value_decoded = %s, want %s", got, want)
	}
	if got := string(l["value_schema_id"]); got != jsonInt(id) {
		t.Errorf("value_schema_id = %s, want %d", got, id)
	}
	if raw := rawValueOf(t, l); string(raw) != string(rawValue) {
		t.Errorf("the line's raw value %x is not the record's %x", raw, rawValue)
	}
	for _, k := range []string{"key_decoded", "key_schema_id", "value_decode_error"} {
		if _, ok := l[k]; ok {
			t.Errorf("record 0 has %s: %v", k, l)
		}
	}
	for k := range lines[1] {
		if strings.Contains(k, "decode") || strings.Contains(k, "schema") {
			t.Errorf("plain record 1 has %s", k)
		}
	}
	if got, want := str(t, lines[2]["value_decode_error"]), "schema id 999: not in the registry"; got != want {
		t.Errorf("record 2 value_decode_error = %q, want %q", got, want)
	}
	if got := string(lines[2]["value_schema_id"]); got != "999" {
		t.Errorf("record 2 value_schema_id = %s, want 999", got)
	}
	if got := str(t, lines[3]["value_decode_error"]); !strings.HasPrefix(got, jsonIntPrefix(id)+"bytes do not decode") {
		t.Errorf("record 3 value_decode_error = %q", got)
	}
	for i := 2; i < 4; i++ {
		if _, ok := lines[i]["value_decoded"]; ok {
			t.Errorf("record %d has value_decoded next to its error", i)
		}
		if rawValueOf(t, lines[i]) == nil {
			t.Errorf("record %d lost its raw value", i)
		}
	}
}

func jsonInt(n int) string { b, _ := json.Marshal(n); return string(b) }

func jsonIntPrefix(id int) string { return "schema id " + jsonInt(id) + ": " }

// TestReplayDecodeAvro: replay --decode adds the decoded Avro value and
// its schema id next to the raw bytes; plain records are unchanged, an
// unknown id and bytes that do not decode get a one-line error field.
func TestReplayDecodeAvro(t *testing.T) {
	tc, reg, topic, id := registryDecodeTopic(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "offsets.db")
	out := filepath.Join(dir, "out.jsonl")
	stdout, stderr, code := runReplayCLI(t, tc, topic+":0:earliest-latest", "--out", out, "--decode", "--registry", reg.URL(), "--store", store)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q with --out", stdout)
	}
	data := readFile(t, out)
	lines := jsonLines(t, string(data))
	checkDecodedLines(t, lines, id, framed(id, orderPayload(t)))
	if n := strings.Count(stderr, "schema id 999: not in the registry"); n != 1 {
		t.Errorf("stderr says the unknown id %d times, want once: %q", n, stderr)
	}
	// The schema was kept on disk next to the store.
	entries, err := os.ReadDir(filepath.Join(dir, "schemas"))
	if err != nil || len(entries) == 0 {
		t.Errorf("no schema cache next to the store: %v %v", entries, err)
	}
}

// TestWatchSinkDecode: watch --sink --decode writes the same fields.
func TestWatchSinkDecode(t *testing.T) {
	tc, reg, topic, id := registryDecodeTopic(t)
	dir := t.TempDir()
	sink := filepath.Join(dir, "sink.jsonl")
	_, stderr, code := runKbatch(t, "watch", "--no-tui", "-b", strings.Join(tc.Brokers, ","), "-t", topic, "--reset", "earliest",
		"--store", filepath.Join(dir, "offsets.db"), "--sink", sink, "--until-end", "--decode", "--registry", reg.URL())
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	data := readFile(t, sink)
	lines := jsonLines(t, string(data))
	checkDecodedLines(t, lines, id, framed(id, orderPayload(t)))
}

// TestDecodeRegistryDown: with the registry unreachable every record is
// still written raw, framed ones with the reason; the exit is 0.
func TestDecodeRegistryDown(t *testing.T) {
	tc := testkafka.New(t)
	reg := srfake.New()
	topic, _ := decodeTopic(t, tc, reg)
	url := reg.URL()
	reg.Close()
	dir := t.TempDir()
	sink := filepath.Join(dir, "sink.jsonl")
	_, stderr, code := runKbatch(t, "watch", "--no-tui", "-b", strings.Join(tc.Brokers, ","), "-t", topic, "--reset", "earliest",
		"--store", filepath.Join(dir, "offsets.db"), "--sink", sink, "--until-end", "--decode", "--registry", url)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	data := readFile(t, sink)
	lines := jsonLines(t, string(data))
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4", len(lines))
	}
	for i, l := range lines {
		_, hasErr := l["value_decode_error"]
		if i == 1 {
			if hasErr {
				t.Errorf("plain record has an error field: %v", l)
			}
			continue
		}
		if !hasErr || !strings.Contains(str(t, l["value_decode_error"]), "registry unreachable") {
			t.Errorf("record %d: value_decode_error %s, want registry unreachable", i, l["value_decode_error"])
		}
		if rawValueOf(t, l) == nil {
			t.Errorf("record %d lost its raw value", i)
		}
	}
	if n := strings.Count(stderr, "registry unreachable"); n != 1 {
		t.Errorf("stderr says the outage %d times, want once: %q", n, stderr)
	}
}

// TestDecodeBasicAuth: the registry password comes from
// KBATCH_REGISTRY_PASSWORD or a file, and is never printed.
func TestDecodeBasicAuth(t *testing.T) {
	const user, pass = "reader", "s3cret-Registry-pw"
	tc, reg, topic, id := basicAuthDecodeTopic(t, user, pass)
	dir := t.TempDir()
	pwFile := writeFile(t, dir, "pw", pass+"\n", 0o600)
	for _, tt := range []struct {
		name string
		env  string
		args []string
	}{
		{"env", pass, nil},
		{"file", "", []string{"--registry-password-file", pwFile}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KBATCH_REGISTRY_PASSWORD", tt.env)
			t.Setenv("KBATCH_REGISTRY_USER", user)
			args := append([]string{topic + ":0:earliest-latest", "--decode", "--registry", reg.URL(), "--store", filepath.Join(t.TempDir(), "o.db")}, tt.args...)
			stdout, stderr, code := runReplayCLI(t, tc, args...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if strings.Contains(stdout+stderr, pass) {
				t.Fatal("the registry password was printed")
			}
			lines := jsonLines(t, stdout)
			checkDecodedLines(t, lines, id, framed(id, orderPayload(t)))
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		t.Setenv("KBATCH_REGISTRY_PASSWORD", "wrong")
		t.Setenv("KBATCH_REGISTRY_USER", user)
		stdout, stderr, code := runReplayCLI(t, tc, topic+":0:0-1", "--decode", "--registry", reg.URL(), "--store", filepath.Join(t.TempDir(), "o.db"))
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		lines := jsonLines(t, stdout)
		if len(lines) != 1 || !strings.Contains(str(t, lines[0]["value_decode_error"]), "403") {
			t.Errorf("lines %v, want a 403 value_decode_error", lines)
		}
	})
}

// TestDecodeUsage: --decode's flag mistakes are exit 2 with one line,
// before anything is read.
func TestDecodeUsage(t *testing.T) {
	tc, topic := filledTopic(t, "decode-usage", 1, 10, 1)
	t.Setenv("KBATCH_REGISTRY", "")
	t.Setenv("KBATCH_REGISTRY_USER", "")
	t.Setenv("KBATCH_REGISTRY_PASSWORD", "")
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no registry", nil, []string{"--decode"}, "--decode needs a schema registry"},
		{"kcat", nil, []string{"--decode", "--registry", "http://127.0.0.1:1", "--format", "kcat"}, "does not go with --format kcat"},
		{"to-topic", nil, []string{"--decode", "--registry", "http://127.0.0.1:1", "--to-topic", "x"}, "--to-topic copies the raw bytes"},
		{"registry without decode", nil, []string{"--registry", "http://127.0.0.1:1"}, "add --decode"},
		{"bad url", nil, []string{"--decode", "--registry", "ftp://x"}, "want http:// or https://"},
		{"user without password", map[string]string{"KBATCH_REGISTRY_USER": "u"}, []string{"--decode", "--registry", "http://127.0.0.1:1"}, "registry user u needs a password"},
		{"password without user", map[string]string{"KBATCH_REGISTRY_PASSWORD": "p"}, []string{"--decode", "--registry", "http://127.0.0.1:1"}, "without a user"},
		{"password env unset", map[string]string{"KBATCH_REGISTRY_USER": "u"}, []string{"--decode", "--registry", "http://127.0.0.1:1", "--registry-password-env", "NOPE_UNSET_VAR"}, "not set or empty"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			stdout, stderr, code := runReplayCLI(t, tc, append([]string{topic + ":0:0-1"}, tt.args...)...)
			if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", code, stdout, stderr, tt.want)
			}
		})
	}
	_, stderr, code := runKbatch(t, "watch", "--no-tui", "-b", strings.Join(tc.Brokers, ","), "-t", topic, "--decode", "--registry", "http://127.0.0.1:1", "--until-end")
	if code != 2 || !strings.Contains(stderr, "add --sink FILE") {
		t.Errorf("watch --decode without --sink: exit %d, stderr %q", code, stderr)
	}
}

// TestDecodeRegistryFromProfile: a profile's [clusters.NAME.registry]
// gives the URL, the user and the variable holding the password.
func TestDecodeRegistryFromProfile(t *testing.T) {
	const user, pass = "reader", "profile-Registry-pw"
	tc, reg, topic, id := basicAuthDecodeTopic(t, user, pass)
	dir := t.TempDir()
	doc := "[clusters.dev]\nbrokers = \"" + strings.Join(tc.Brokers, ",") + "\"\n[clusters.dev.registry]\nurl = \"" + reg.URL() +
		"\"\nusername = \"" + user + "\"\npassword_env = \"TEST_REGISTRY_PW\"\n"
	cfg := writeFile(t, dir, "config.toml", doc, 0o600)
	t.Setenv("KBATCH_REGISTRY", "")
	t.Setenv("KBATCH_REGISTRY_USER", "")
	t.Setenv("KBATCH_REGISTRY_PASSWORD", "")
	t.Setenv("TEST_REGISTRY_PW", pass)
	stdout, stderr, code := runReplayCLI(t, tc, topic+":0:earliest-latest", "--config", cfg, "--cluster", "dev", "--decode", "--store", filepath.Join(dir, "o.db"))
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	checkDecodedLines(t, jsonLines(t, stdout), id, framed(id, orderPayload(t)))
}

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
	valueID := registered(t, reg, "bulk-value", decodeTestSchema)
	const keySchema = `{"type":"record","name":"Key","namespace":"shop","fields":[{"name":"n","type":"long"}]}`
	keyID := registered(t, reg, "bulk-key", keySchema)
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
		data := readFile(t, out)
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
