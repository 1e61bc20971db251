package tui

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

func TestProduceWritesOnlyAfterConfirmation(t *testing.T) {
	w := &fakeWriter{res: WriteResult{Partition: 2, Offset: 77}}
	m := liveModel(t, 140, 40, Options{Writer: w, Cluster: "staging"})
	press(m, "p")
	f, ok := m.top().(*produceForm)
	if !ok {
		t.Fatalf("p opened %T", m.top())
	}
	if got := f.inputs[pfTopic].Value(); got != "events" {
		t.Errorf("topic prefilled %q, want the selected partition's topic", got)
	}
	press(m, "tab", "tab") // the focus starts at the topic
	paste(m, `user-7`)     // a paste types into the field as keys do
	press(m, "tab")
	typeText(m, `{"a":1}\n`)
	press(m, "tab", "tab")
	typeText(m, "source=web, trace=x\\x2cy")
	press(m, "enter")
	s := screen(m)
	mustContain(t, s, `Write this record to topic "events" on cluster staging (127.0.0.1:9092)?`,
		"by key: murmur2 of the key, as the Java client", `{"a":1}\n (8 B)`, "source=web, trace=x,y", "y writes it")
	if n := len(w.writes()); n != 0 {
		t.Fatalf("%d writes before the confirmation", n)
	}
	press(m, "n") // back to the form: still nothing written
	mustContain(t, screen(m), "enter reviews")
	run(m, press(m, "enter", "y"))
	ws := w.writes()
	if len(ws) != 1 {
		t.Fatalf("%d writes, want 1", len(ws))
	}
	r := ws[0]
	if r.Topic != "events" || r.Partition != ByKey || string(r.Key) != "user-7" || string(r.Value) != "{\"a\":1}\n" ||
		len(r.Headers) != 2 || string(r.Headers[1].Key) != "trace" || string(r.Headers[1].Value) != "x,y" {
		t.Errorf("wrote %+v", r)
	}
	s = screen(m)
	mustContain(t, s, "written to events[2] at offset 77", "wrote 1 record to events[2] at offset 77 on cluster staging")
}

func TestProduceFailureIsOneLineInTheForm(t *testing.T) {
	w := &fakeWriter{err: errors.New(`not authorized to write to topic "events": the user needs the WRITE permission on it (Kafka ACL)`)}
	m := liveModel(t, 140, 40, Options{Writer: w})
	press(m, "p", "tab", "tab") // from the topic to the key
	typeText(m, "k")
	run(m, press(m, "enter", "y"))
	s := screen(m)
	mustContain(t, s, "write failed: not authorized to write")
	if f, ok := m.top().(*produceForm); !ok || f.stage != stageEdit || !strings.Contains(f.View(), "needs the WRITE permission") {
		t.Errorf("the form does not show the failure for another try")
	}
}

func TestProduceChecksTheFields(t *testing.T) {
	m := liveModel(t, 140, 40, Options{Writer: &fakeWriter{}})
	press(m, "p", "tab") // the partition (the topic has focus)
	typeText(m, "x1")
	press(m, "enter")
	mustContain(t, screen(m), `partition "x1": want a partition number`)
	press(m, "backspace", "backspace", "tab")
	typeText(m, `bad\q`)
	press(m, "enter")
	mustContain(t, screen(m), `key: unknown escape \\q at column 4`)
}

// A null value (ctrl+n) is a tombstone; a value file's bytes are the
// value, read when y is pressed.
func TestProduceNullValueAndValueFile(t *testing.T) {
	w := &fakeWriter{}
	m := liveModel(t, 140, 40, Options{Writer: w})
	press(m, "p", "tab", "tab") // from the topic to the key
	typeText(m, "k")
	press(m, "tab")
	m.Update(tea.KeyPressMsg{Code: 'n', Mod: tea.ModCtrl})
	press(m, "enter")
	mustContain(t, screen(m), "null (a tombstone)")
	run(m, press(m, "y"))
	if ws := w.writes(); len(ws) != 1 || ws[0].Value != nil || string(ws[0].Key) != "k" {
		t.Fatalf("writes %+v, want a null value", ws)
	}

	path := filepath.Join(t.TempDir(), "value.bin")
	data := []byte{0, 1, 2, 0xff, '\n'}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	press(m, "enter", "tab") // write another: the value file field
	typeText(m, path)
	press(m, "enter")
	mustContain(t, screen(m), "5 B from "+path)
	run(m, press(m, "y"))
	if ws := w.writes(); len(ws) != 2 || !bytes.Equal(ws[1].Value, data) {
		t.Fatalf("second write %+v, want the file's bytes", ws)
	}
}

// E puts the selected record in the form, bytes escaped, and writes it
// back as it was when nothing is changed.
func TestEditReproducesTheSelectedRecord(t *testing.T) {
	w := &fakeWriter{}
	m := liveModel(t, 140, 40, Options{Writer: w})
	b := batch(3, 1, 20, offsets.StateAcked)
	b.Samples[0].Value = []byte("bin\x00\x1b[31m\xff")
	feed(m, &consumer.BatchEvent{Batch: b})
	press(m, "3") // records pane, first record
	r := m.records.list.selected()
	press(m, "E")
	f, ok := m.top().(*produceForm)
	if !ok {
		t.Fatalf("E opened %T", m.top())
	}
	mustContain(t, screen(m), "Edit and re-produce events[0] @ 20", `bin\x00\x1b[31m\xff`)
	mustNotContain(t, m.View().Content, "\x1b[31m")
	run(m, press(m, "enter", "y"))
	ws := w.writes()
	if len(ws) != 1 {
		t.Fatalf("%d writes", len(ws))
	}
	got := ws[0]
	if got.Topic != "events" || got.Partition != 0 || !bytes.Equal(got.Key, r.Key.Data) || !bytes.Equal(got.Value, r.Value.Data) ||
		len(got.Headers) != 1 || string(got.Headers[0].Key) != "source" {
		t.Errorf("re-produced %+v from %+v", got, r)
	}
	_ = f
}

func TestEditNeedsAWholeRecord(t *testing.T) {
	m := liveModel(t, 140, 40, Options{Writer: &fakeWriter{}})
	b := batch(3, 1, 20, offsets.StateAcked)
	b.Samples[0].Value = bytes.Repeat([]byte("v"), maxKeptBytes+10)
	feed(m, &consumer.BatchEvent{Batch: b})
	press(m, "3", "E")
	noViewOpen(t, m, "E needs the whole record")
}

func TestProduceUnavailableWithoutWriter(t *testing.T) {
	m := liveModel(t, 140, 40, Options{})
	press(m, "p")
	noViewOpen(t, m, "writing records is not available")
}

// esc while the write is in flight closes the form; the answer still
// reaches the status line.
func TestProduceEscWhileWriting(t *testing.T) {
	w := &fakeWriter{res: WriteResult{Partition: 1, Offset: 9}}
	m := liveModel(t, 140, 40, Options{Writer: w})
	press(m, "p", "tab", "tab") // from the topic to the key
	typeText(m, "k")
	press(m, "enter")
	req := press(m, "y")() // the request, not yet handled
	_, write := m.Update(req)
	closing := press(m, "esc")
	run(m, write) // before any Fatal: Close waits for the write
	run(m, closing)
	noViewOpen(t, m, "wrote 1 record to events[1] at offset 9")
}

func TestFieldTextRoundTrip(t *testing.T) {
	for _, b := range [][]byte{nil, {}, []byte(`a\b`), []byte("tab\tnl\nesc\x1b"), {0xff, 0xfe, 'a'}, []byte("bidi\u202eok"), []byte("é ü 日本"),
		// An unprintable character beyond U+FFFF: written as \u40efb it
		// would read back as U+40EF and "b".
		[]byte("\U00040efb")} {
		s := quoteField(b, "")
		if strings.ContainsAny(s, "\x1b\n\t\u202e") {
			t.Errorf("quoteField(%q) = %q holds raw control bytes", b, s)
		}
		got, err := unquoteField(s)
		if err != nil || !bytes.Equal(got, b) && !(len(got) == 0 && len(b) == 0) {
			t.Errorf("round trip of %q: %q, %v", b, got, err)
		}
	}
	for _, bad := range []string{`\`, `\x4`, `\xzz`, `\u12`, `\q`} {
		if _, err := unquoteField(bad); err == nil {
			t.Errorf("unquoteField(%q) took it", bad)
		}
	}
}

func FuzzFieldText(f *testing.F) {
	f.Add([]byte("a=b, c"), []byte("x\x00"))
	f.Fuzz(func(t *testing.T, k, v []byte) {
		got, err := unquoteField(quoteField(v, ""))
		if err != nil || !bytes.Equal(got, v) && len(got)+len(v) > 0 {
			t.Fatalf("value %q: %q %v", v, got, err)
		}
		if len(k) == 0 {
			return
		}
		hs, err := parseHeaders(formatHeaders([]headerPair{{k, v}, {[]byte("n"), nil}}))
		if err != nil || len(hs) != 2 || !bytes.Equal(hs[0].key, k) || !bytes.Equal(hs[0].value, v) && len(v)+len(hs[0].value) > 0 {
			t.Fatalf("header %q=%q: %+v %v", k, v, hs, err)
		}
	})
}
