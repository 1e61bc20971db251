package tui

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/schema"
)

// fakeDecoder decodes framed bytes whose payload is the JSON itself; ids
// in pending answer Pending, ids in failed fail with their reason. It
// counts the calls per record bytes.
type fakeDecoder struct {
	mu      sync.Mutex
	calls   map[string]int
	pending map[int]bool
	failed  map[int]string
}

func newFakeDecoder() *fakeDecoder {
	return &fakeDecoder{calls: map[string]int{}, pending: map[int]bool{}, failed: map[int]string{}}
}

func (f *fakeDecoder) TryDecode(topic string, isKey bool, b []byte) schema.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[string(b)]++
	fr, ok := schema.ParseFrame(b)
	if !ok {
		return schema.Result{Status: schema.NotFramed}
	}
	switch {
	case f.pending[fr.ID]:
		return schema.Result{Status: schema.Pending, SchemaID: fr.ID}
	case f.failed[fr.ID] != "":
		return schema.Result{Status: schema.Failed, SchemaID: fr.ID, Reason: fmt.Sprintf("schema id %d: %s", fr.ID, f.failed[fr.ID])}
	}
	subject := topic + "-value"
	if isKey {
		subject = topic + "-key"
	}
	return schema.Result{Status: schema.Decoded, Format: schema.Avro, SchemaID: fr.ID, Subject: subject, Version: 2, JSON: string(fr.Payload)}
}

func (f *fakeDecoder) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

func (f *fakeDecoder) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

// framed is the Confluent wire format of payload with schema id.
func framed(id int, payload string) string {
	return string([]byte{0, byte(id >> 24), byte(id >> 16), byte(id >> 8), byte(id)}) + payload
}

// orderBatch is a batch of n framed Avro-looking orders on "orders" (one
// partition) with schema id 3, and one plain record.
func orderBatch(id uint64, n int) *consumer.BatchEvent {
	b := &consumer.Batch{Batch: offsets.Batch{ID: id, Time: t0, State: offsets.StateAcked}}
	b.Ranges = []offsets.BatchRange{{Range: offsets.Range{Partition: part("orders", 0), From: 0, Until: int64(n + 1)}, Records: int64(n + 1)}}
	b.Records = int64(n + 1)
	for i := 0; i < n; i++ {
		b.Samples = append(b.Samples, msg("orders", 0, int64(i), fmt.Sprintf("order-%d", i),
			framed(3, fmt.Sprintf(`{"order_id":"o-%d","customer":"alice","amount":"12.50"}`, i))))
	}
	b.Samples = append(b.Samples, msg("orders", 0, int64(n), "plain", "not framed"))
	return &consumer.BatchEvent{Batch: b}
}

func TestRecordsPanePreviewsDecodedValues(t *testing.T) {
	dec := newFakeDecoder()
	m, _ := newTestModel(t, 140, 40, Options{Decoder: dec})
	feed(m, orderBatch(1, 3))
	s := screen(m)
	mustContain(t, s, `{"order_id":"o-0","cust`, "not framed")
	if strings.Contains(s, `\x00\x00\x00\x00\x03`) {
		t.Fatalf("a framed value shows raw:\n%s", s)
	}
}

// Without a decoder, framed values show raw and escaped, as before.
func TestRecordsPaneWithoutDecoderShowsRaw(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	feed(m, orderBatch(1, 3))
	mustContain(t, screen(m), `\x00\x00\x00\x00\x03{"ord`)
}

// Decoding happens for what is drawn, filtered or opened only: a catch-up
// of many batches decodes nothing until a screen shows them, and then only
// the rows on it.
func TestDecodesOnlyWhatIsShown(t *testing.T) {
	dec := newFakeDecoder()
	m, _ := newTestModel(t, 80, 24, Options{Decoder: dec})
	var evs []consumer.Event
	for id := uint64(1); id <= 50; id++ {
		evs = append(evs, orderBatch(id, 200))
	}
	feed(m, evs...)
	if n := dec.total(); n != 0 {
		t.Fatalf("%d decodes before anything was drawn, want 0", n)
	}
	press(m, "3")
	_ = screen(m)
	first := dec.total()
	if first == 0 || first > 2*24 {
		t.Fatalf("%d decodes for one screen of at most 24 rows (key and value each), want 1..48", first)
	}
	_ = screen(m)
	_ = screen(m)
	if n := dec.total(); n != first {
		t.Fatalf("drawing again decoded %d more times, want 0 (results are kept)", n-first)
	}
}

func TestPendingSchemaShowsDecodingThenDecoded(t *testing.T) {
	dec := newFakeDecoder()
	dec.pending[3] = true
	notes := NewSchemaNotes()
	m, _ := newTestModel(t, 140, 40, Options{Decoder: dec, SchemaNotes: notes})
	feed(m, orderBatch(1, 2))
	s := screen(m)
	mustContain(t, s, "decoding…")
	press(m, "3", "enter")
	mustContain(t, screen(m), "decoding… fetching schema id 3 from the registry")

	dec.set(func() { dec.pending[3] = false })
	notes.Ready(3)
	m.Update(notes.wait(m.ctx)()) // the message the screen gets (not the re-armed wait, which blocks)
	s = screen(m)
	mustContain(t, s, `"order_id": "o-0"`, "Avro · schema id 3 · orders-value v2")
	press(m, "esc")
	s = screen(m)
	mustNotContain(t, s, "decoding…")
	mustContain(t, s, `{"order_id":"o-1"`)
}

func TestFailedSchemaShowsRawWithReasonAndOneEvent(t *testing.T) {
	dec := newFakeDecoder()
	dec.failed[3] = "not in the registry"
	notes := NewSchemaNotes()
	m, _ := newTestModel(t, 140, 40, Options{Decoder: dec, SchemaNotes: notes})
	feed(m, orderBatch(1, 2))
	mustContain(t, screen(m), `\x00\x00\x00\x00\x03{"ord`)
	notes.Event(schema.Event{Kind: schema.FetchFailed, SchemaID: 3, Topic: "orders", Message: "schema id 3: not in the registry"})
	m.Update(notes.wait(m.ctx)())
	if got := len(m.events.events); got != 1 {
		t.Fatalf("%d events, want 1", got)
	}
	e := m.events.events[0]
	if e.Code != codeSchema || e.Message != "schema id 3: not in the registry (topic orders)" {
		t.Fatalf("event %+v", e)
	}
	press(m, "3", "enter")
	mustContain(t, screen(m), "not decoded: schema id 3: not in the registry", `\x00\x00\x00\x00\x03{"order_id":"o-0"`)
}

// v cycles the record detail: decoded (pretty, with the schema) → raw
// escaped text → hex dump → decoded.
func TestDetailToggleDecodedRawHex(t *testing.T) {
	dec := newFakeDecoder()
	m, _ := newTestModel(t, 140, 40, Options{Decoder: dec})
	feed(m, orderBatch(1, 2))
	press(m, "3", "enter")
	s := screen(m)
	mustContain(t, s, "Record orders[0] @ 0 · decoded", "Avro · schema id 3 · orders-value v2", `"customer": "alice"`, "v show raw")
	press(m, "v")
	s = screen(m)
	mustContain(t, s, "Record orders[0] @ 0 · raw text", `\x00\x00\x00\x00\x03{"order_id":"o-0"`, "v show hex")
	mustNotContain(t, s, `"customer": "alice"`)
	press(m, "v")
	s = screen(m)
	mustContain(t, s, "Record orders[0] @ 0 · hex", "00000000  00 00 00 00 03 7b 22 6f", "v show decoded")
	press(m, "v")
	mustContain(t, screen(m), `"customer": "alice"`)
}

// The filter matches the decoded text of records with a schema, and the
// raw bytes of the others.
func TestFilterMatchesDecodedText(t *testing.T) {
	dec := newFakeDecoder()
	m, _ := newTestModel(t, 140, 40, Options{Decoder: dec})
	b := orderBatch(1, 3)
	b.Batch.Samples[1].Value = []byte(framed(3, `{"order_id":"o-1","customer":"bob \"the builder\""}`))
	feed(m, b)
	press(m, "3", "/") // the search over every sample kept (h19b)
	typeText(m, `BOB \"THE`)
	press(m, "enter")
	if got := len(m.findView.list.all); got != 1 {
		t.Fatalf("%d records match the decoded text, want 1", got)
	}
	press(m, "/", "ctrl+u")
	typeText(m, "not fram")
	press(m, "enter")
	if got := len(m.findView.list.all); got != 1 {
		t.Fatalf("%d records match the raw text of an unframed value, want 1", got)
	}
}

// matchText is what / (and a history search) matches: the decoded JSON,
// or the raw bytes; without a decoder, the raw bytes.
func TestMatchText(t *testing.T) {
	dec := &decoding{dec: newFakeDecoder()}
	r := newRecord(msg("orders", 0, 1, "k", framed(3, `{"a":1}`)), 1)
	if text, raw := dec.matchText(r, false); text != `{"a":1}` || raw != nil {
		t.Fatalf("framed value: text %q raw %q", text, raw)
	}
	if text, raw := dec.matchText(r, true); text != "" || string(raw) != "k" {
		t.Fatalf("plain key: text %q raw %q", text, raw)
	}
	var none *decoding
	if text, raw := none.matchText(r, false); text != "" || string(raw) != framed(3, `{"a":1}`) {
		t.Fatalf("no decoder: text %q raw %q", text, raw)
	}
	if !dec.matches(r, `"A":1`) || dec.matches(r, "\x03") || !none.matches(r, "\x03") {
		t.Fatal("matches does not follow matchText")
	}
}

// A decoder that hands back hostile text (a bug, or a schema's bytes
// passed on) still cannot drive the terminal: the screen escapes it again.
func TestHostileDecodedTextIsEscaped(t *testing.T) {
	dec := newFakeDecoder()
	m, _ := newTestModel(t, 140, 40, Options{Decoder: dec})
	hostile := "{\"note\":\"\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07 \u202etxt.exe \u009b7m\"}"
	b := orderBatch(1, 1)
	b.Batch.Samples[0].Value = []byte(framed(3, hostile))
	feed(m, b)
	for _, keys := range [][]string{nil, {"3", "enter"}, {"v"}, {"v"}, {"esc", "2", "enter"}} {
		press(m, keys...)
		out := m.View().Content
		plain := stripANSI(out)
		for _, bad := range []string{"\x1b[2J", "\x1b]52", "\x07", "\u202e", "\u009b"} {
			if strings.Contains(plain, bad) {
				t.Fatalf("after %v the screen holds %q raw:\n%s", keys, bad, plain)
			}
		}
	}
}

func TestBatchDetailSaysSchemaIDs(t *testing.T) {
	dec := newFakeDecoder()
	m, _ := newTestModel(t, 140, 40, Options{Decoder: dec})
	b := orderBatch(1, 2)
	b.Batch.Samples[1].Key = []byte(framed(9, `"k-1"`))
	feed(m, b)
	press(m, "2", "enter")
	mustContain(t, screen(m), "schema ids in the samples: 3 (orders-value v2), 9 (orders-key v2)", `{"order_id":"o-0"`)
}

// A value cut to the in-memory limit is not handed to the decoder.
func TestTruncatedFramedValueIsNotDecoded(t *testing.T) {
	dec := newFakeDecoder()
	d := &decoding{dec: dec}
	big := framed(3, `{"x":"`+strings.Repeat("a", maxKeptBytes)+`"}`)
	r := newRecord(&krecord.Record{Topic: "orders", Value: []byte(big)}, 1)
	res := d.result(r, false, false)
	if res.Status != schema.Failed || !strings.Contains(res.Reason, "only the first 1.0 MiB are kept in memory") {
		t.Fatalf("got %+v", res)
	}
	if dec.total() != 0 {
		t.Fatal("the cut bytes went to the decoder")
	}
}

// A failed result is asked for again once a schema fetch ended (the
// registry may be back); a decoded one never is.
func TestFailedResultIsRetriedAfterAFetch(t *testing.T) {
	dec := newFakeDecoder()
	dec.failed[3] = "registry unreachable"
	d := &decoding{dec: dec}
	r := newRecord(msg("orders", 0, 1, "", framed(3, `{}`)), 1)
	d.result(r, false, false)
	d.result(r, false, false)
	if dec.total() != 1 {
		t.Fatalf("%d decodes, want 1 until a fetch ends", dec.total())
	}
	dec.set(func() { delete(dec.failed, 3) })
	d.gen++
	if res := d.result(r, false, false); res.Status != schema.Decoded {
		t.Fatalf("after the fetch: %+v", res)
	}
	d.gen++
	d.result(r, false, false)
	if dec.total() != 2 {
		t.Fatalf("%d decodes, want 2: a decoded result is kept", dec.total())
	}
}

// The decoded record detail at 80×24, through the real program.
func TestGoldenDecodedDetail(t *testing.T) {
	for _, tt := range []struct {
		name string
		keys []string
	}{
		{"decoded_detail_80x24", []string{"3", "enter"}},
		{"decoded_detail_hex_80x24", []string{"3", "enter", "v", "v"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runProgram(t, 80, 24, Options{Decoder: newFakeDecoder()}, []consumer.Event{orderBatch(1, 2)}, tt.keys...)
			golden.RequireEqual(t, []byte(r.screen))
		})
	}
}

// y in the record detail copies what it shows: the decoded JSON, and the
// raw bytes once v shows them raw.
func TestCopyTakesWhatTheDetailShows(t *testing.T) {
	dec := newFakeDecoder()
	m, _ := newTestModel(t, 140, 40, Options{Decoder: dec})
	feed(m, orderBatch(1, 2))
	press(m, "3", "enter")
	want := `{"order_id":"o-0","customer":"alice","amount":"12.50"}`
	cmd := m.copyValue()
	if cmd == nil {
		t.Fatal("y copied nothing")
	}
	if got := fmt.Sprint(cmd()); got != want {
		t.Errorf("decoded detail: copied %q, want %q", got, want)
	}
	mustContain(t, screen(m), "copied the decoded JSON of orders[0] @ 0 (Avro · schema id 3")
	press(m, "v")
	cmd = m.copyValue()
	if got := fmt.Sprint(cmd()); got != framed(3, want) {
		t.Errorf("raw detail: copied %q, want the framed bytes", got)
	}
	mustContain(t, screen(m), "copied the value of orders[0] @ 0")
}
