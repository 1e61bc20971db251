package tui

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// hostile payloads: each carries a marker ("PWN…") right after bytes that
// would drive a terminal if printed raw.
var hostile = []string{
	"\x1b]0;PWN-title\x07",                  // OSC: set the window title
	"\x1b]52;c;UFdOLWNsaXA=\x07",            // OSC 52: write the clipboard
	"\x1b]8;;http://PWN-link\x1b\\x",        // OSC 8 hyperlink
	"\x1bP+qPWN-dcs\x1b\\",                  // DCS
	"\x1b[2J\x1b[HPWN-clear",                // CSI: clear screen, home
	"\x1b[31;1mPWN-red\x1b[0m",              // SGR
	"\x1b_PWN-apc\x1b\\",                    // APC
	"\u009b2JPWN-c1csi",                     // C1 CSI as UTF-8
	"\x9b2JPWN-rawc1",                       // C1 CSI as a raw byte
	"abc\u202ePWN-bidi\u202c",               // bidi override
	"\u2066PWN-isolate\u2069",               // bidi isolate
	"\x00\x07\x08\x7fPWN-c0",                // NUL BEL BS DEL
	"\xff\xfePWN-invalid",                   // invalid UTF-8
	"line1\r\nline2\rPWN-cr",                // line breaks
	strings.Repeat("\x1b[5mPWN-big", 1<<16), // ~600 KiB of escapes
}

// hostileEvents is a batch whose keys, values and headers are hostile,
// and a notice whose message is.
func hostileEvents() []consumer.Event {
	b := &consumer.Batch{Batch: offsets.Batch{ID: 1, Time: t0, State: offsets.StateAcked}}
	b.Ranges = []offsets.BatchRange{{Range: offsets.Range{Partition: part("events", 0), From: 0, Until: int64(len(hostile))}, Records: int64(len(hostile))}}
	for i, h := range hostile {
		m := msg("events", 0, int64(i), h, h)
		m.Headers = []*krecord.Header{{Key: []byte(h), Value: []byte(h)}}
		b.Samples = append(b.Samples, m)
	}
	n := offsets.NewEvent(t0, offsets.CodeBrokerError, part("events", 0), "broker said \x1b]0;PWN-notice\x07 \u202ePWN-notice")
	return []consumer.Event{started(1), &consumer.Notice{Event: n}, &consumer.BatchEvent{Batch: b}}
}

// TestHostileRecordsNeverReachTheTerminal runs the real program over
// hostile records, opens each record's detail, and checks every byte the
// program wrote: no escape sequence of its own carries a marker, no text
// holds a control, bidi or invalid byte, and the escaped forms are on
// screen.
func TestHostileRecordsNeverReachTheTerminal(t *testing.T) {
	keys := []string{"3"}
	for range hostile {
		keys = append(keys, "enter", "G", "esc", "j") // detail (to the bottom), back, next
	}
	keys = append(keys, "4", "enter") // the notice's detail
	r := runProgram(t, 120, 40, Options{}, hostileEvents(), keys...)
	if len(r.raw) == 0 {
		t.Fatal("no output")
	}
	checkOutput(t, r.raw)
	for _, want := range []string{`\x1b]0;PWN-notice\x07`, `\u202ePWN-notice`} {
		if !strings.Contains(r.screen, want) {
			t.Errorf("final screen lacks %q:\n%s", want, r.screen)
		}
	}
	// The list view of the same records, as escaped text.
	m, _ := newTestModel(t, 200, 40, Options{})
	feed(m, hostileEvents()...)
	s := screen(m)
	for _, want := range []string{`\x1b]0;PWN-title\x07`, `\x1bP+qPWN-dcs`, `\u009b2JPWN-c1csi`, `\x9b2JPWN-rawc1`,
		`abc\u202ePWN-bidi`, `\xff\xfePWN-invalid`, `line1\r\nline2\rPWN-cr`, `\x00\x07\x08\x7fPWN-c0`} {
		if !strings.Contains(s, want) {
			t.Errorf("records pane lacks %q", want)
		}
	}
	checkOutput(t, []byte(m.View().Content))
}

// checkOutput walks raw terminal output sequence by sequence.
func checkOutput(t *testing.T, raw []byte) {
	t.Helper()
	for _, bad := range [][]byte{{0xff}, {0xfe}, []byte("\u009b"), []byte("\u202e"), []byte("\u2066"), {0x00}, {0x7f}} {
		if i := bytes.Index(raw, bad); i >= 0 {
			t.Fatalf("raw output holds % x at %d: %q", bad, i, raw[max(0, i-40):min(len(raw), i+40)])
		}
	}
	var state byte
	for b := raw; len(b) > 0; {
		seq, _, n, next := ansi.DecodeSequence(b, state, nil)
		state = next
		if n <= 0 {
			break
		}
		b = b[n:]
		if len(seq) == 0 {
			continue
		}
		c := seq[0]
		control := c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)
		if !control {
			r, _ := utf8.DecodeRune(seq)
			if r == utf8.RuneError || krecord.UnsafeRune(r) {
				t.Fatalf("unsafe text %q in output", seq)
			}
			continue
		}
		if bytes.Contains(seq, []byte("PWN")) {
			t.Fatalf("a record's bytes reached the terminal as a sequence: %q", seq)
		}
		if c == 0x07 || c == 0x08 || c == 0x00 {
			t.Fatalf("bare control %q in output", seq)
		}
	}
}
