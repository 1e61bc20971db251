package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// tailMsgs are n records of events[p] from offset from, value "tail-<offset>".
func tailMsgs(p int32, from int64, n int) []*krecord.Record {
	out := make([]*krecord.Record, n)
	for i := range out {
		o := from + int64(i)
		out[i] = msg("events", p, o, fmt.Sprintf("key-%d", o), fmt.Sprintf("tail-%d", o))
	}
	return out
}

// The tap copies nothing while the tail view is closed.
func TestTailTakesRecordsOnlyWhileOpen(t *testing.T) {
	tl := NewTail(100)
	tl.Read(tailMsgs(0, 0, 5))
	if recs, _ := tl.take(); len(recs) != 0 {
		t.Fatalf("closed tap kept %d records", len(recs))
	}
	tl.setOpen(true)
	in := tailMsgs(0, 10, 3)
	tl.Read(in)
	recs, lost := tl.take()
	if len(recs) != 3 || lost != 0 || recs[0].Offset != 10 || string(recs[2].Value.Data) != "tail-12" {
		t.Fatalf("open tap took %d records, lost %d", len(recs), lost)
	}
	// The copies do not share the stream's bytes.
	in[0].Value[0] = 'X'
	if string(recs[0].Value.Data) != "tail-10" {
		t.Fatal("the tap kept the stream's bytes instead of a copy")
	}
	// A screen that does not take for a whole ring loses the oldest.
	tl.Read(tailMsgs(0, 100, 150))
	recs, lost = tl.take()
	if len(recs) != 100 || lost != 50 || recs[0].Offset != 150 {
		t.Fatalf("took %d (first %d), lost %d; want the newest 100, 50 lost", len(recs), recs[0].Offset, lost)
	}
	tl.setOpen(false)
	tl.Read(tailMsgs(0, 500, 5))
	if recs, _ := tl.take(); len(recs) != 0 {
		t.Fatalf("closed again, the tap kept %d records", len(recs))
	}
}

// Each tail record keeps bounded bytes; the ring keeps the last N records
// and at most its byte budget (docs/design.md §2.6).
func TestTailBounds(t *testing.T) {
	m := &krecord.Record{Topic: "events", Key: []byte(strings.Repeat("k", 5000)), Value: []byte(strings.Repeat("v", 1<<20))}
	for i := 0; i < 20; i++ {
		m.Headers = append(m.Headers, &krecord.Header{Key: []byte(strings.Repeat("h", 1000)), Value: []byte(strings.Repeat("x", 1000))})
	}
	r := newTailRecord(m)
	if len(r.Value.Data) != tailValueBytes || r.Value.Size != 1<<20 || !r.Value.truncated() {
		t.Fatalf("value kept %d of %d bytes", len(r.Value.Data), r.Value.Size)
	}
	if len(r.Key.Data) != tailKeyBytes || len(r.Headers) != tailHeaders || len(r.Headers[0].Key) != tailHeaderBytes || len(r.Headers[0].Value.Data) != tailHeaderBytes {
		t.Fatalf("key %d bytes, %d headers of %d+%d bytes", len(r.Key.Data), len(r.Headers), len(r.Headers[0].Key), len(r.Headers[0].Value.Data))
	}
	if n := r.size(); n > 12<<10 {
		t.Fatalf("a tail record holds %d bytes, want at most 12 KiB", n)
	}

	ring := newTailRing(1000)
	var dropped int
	for i := 0; i < 30; i++ {
		recs := make([]*record, 100)
		for j := range recs {
			recs[j] = newTailRecord(tailMsgs(0, int64(100*i+j), 1)[0])
		}
		dropped += ring.add(recs)
	}
	if len(ring.recs) != 1000 || dropped != 2000 || ring.recs[0].Offset != 2000 || ring.total != 3000 {
		t.Fatalf("ring holds %d (first %d), dropped %d, total %d", len(ring.recs), ring.recs[0].Offset, dropped, ring.total)
	}
	ring = newTailRing(MaxTailRecords)
	for i := 0; i < 10; i++ {
		recs := make([]*record, 1000)
		for j := range recs {
			recs[j] = r // 10 000 records of ~10 KiB: 100 MiB without the byte budget
		}
		ring.add(recs)
	}
	if ring.bytes > tailMaxBytes || len(ring.recs)*r.size() > tailMaxBytes {
		t.Fatalf("ring holds %d bytes, budget %d", ring.bytes, tailMaxBytes)
	}
}

// openTailWith opens the tail view of m and delivers recs as the tap
// would.
func deliverTail(m *Model, recs []*krecord.Record) {
	m.opts.Tail.Read(recs)
	m.Update(tailMsg{gen: m.tailGen})
}

// t opens the tail view: records show as they are read, the newest
// selected; space pauses the view (not the stream), G follows again;
// enter shows a record; closing it stops the tap.
func TestTailView(t *testing.T) {
	m, fs := newTestModel(t, 140, 40, Options{Tail: NewTail(50)})
	feed(m, twoTopics()...)
	press(m, "t")
	if m.tailView == nil || !m.opts.Tail.open.Load() {
		t.Fatal("t did not open the tail view and its tap")
	}
	mustContain(t, screen(m), "Tail · following", "records show here as the stream reads them")
	deliverTail(m, tailMsgs(0, 100, 30))
	s := screen(m)
	mustContain(t, s, "Tail · following · 30 of 50 records kept", "> ", "tail-129")
	if r := m.tailView.list.selected(); r == nil || r.Offset != 129 {
		t.Fatalf("selected %v, want the newest record 129", r)
	}

	press(m, "space")
	mustContain(t, screen(m), "Tail · paused, stream runs")
	if calls := fs.Calls(); len(calls) != 0 {
		t.Fatalf("pausing the view sent %v to the stream", calls)
	}
	deliverTail(m, tailMsgs(0, 130, 40))
	mustNotContain(t, screen(m), "tail-169")
	if m.tailRing.total != 70 || len(m.tailRing.recs) != 50 {
		t.Fatalf("ring took %d and keeps %d while the view was paused", m.tailRing.total, len(m.tailRing.recs))
	}
	press(m, "G")
	s = screen(m)
	mustContain(t, s, "Tail · following · 50 of 50 records kept", "tail-169")
	mustNotContain(t, s, "tail-119") // dropped from the ring of 50

	// Moving up pauses; the filter filters the tail and marks matches.
	press(m, "k")
	mustContain(t, screen(m), "paused")
	press(m, "/")
	paste(m, "TAIL-15") // a paste types into the filter as keys do
	press(m, "enter")
	s = screen(m)
	mustContain(t, s, "tail-150", "tail-159", `filter "TAIL-15" 10 of 50`)
	mustNotContain(t, s, "tail-149")
	if !strings.Contains(m.View().Content, matchOn+"tail-15"+matchOff) {
		t.Fatal("matches are not marked")
	}

	press(m, "enter")
	mustContain(t, screen(m), "Record events[0] @ 150") // the filter selects its first match
	press(m, "esc")
	mustContain(t, screen(m), "Tail · ")
	press(m, "esc") // clears the filter
	press(m, "esc") // closes
	if m.tailView != nil || m.opts.Tail.open.Load() {
		t.Fatal("closing the tail view left its tap open")
	}
	mustNotContain(t, screen(m), "Tail ·")
	// The ring stays for a search; the tap copies nothing now.
	m.opts.Tail.Read(tailMsgs(0, 500, 5))
	if recs, _ := m.opts.Tail.take(); len(recs) != 0 || len(m.tailRing.recs) != 50 {
		t.Fatalf("after closing: tap %d, ring %d", len(recs), len(m.tailRing.recs))
	}
}

// Without a tap (kbatch spark) t says why there is no tail view.
func TestTailViewNeedsAStream(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{})
	press(m, "t")
	if m.tailView != nil {
		t.Fatal("tail view without a tap")
	}
	mustContain(t, screen(m), "the tail view needs a stream kbatch reads itself")
}

// A tail message for a view closed since is ignored.
func TestTailStaleMessage(t *testing.T) {
	m, _ := newTestModel(t, 140, 40, Options{Tail: NewTail(50)})
	press(m, "t")
	gen := m.tailGen
	press(m, "esc")
	press(m, "t")
	m.opts.Tail.Read(tailMsgs(0, 0, 3))
	m.Update(tailMsg{gen: gen})
	if len(m.tailRing.recs) != 0 {
		t.Fatal("a stale tail message was taken")
	}
	m.Update(tailMsg{gen: m.tailGen})
	if len(m.tailRing.recs) != 3 {
		t.Fatalf("ring holds %d records, want 3", len(m.tailRing.recs))
	}
}

func TestGoldenTail(t *testing.T) {
	opts := Options{StorePath: "/home/me/.local/state/kbatch/offsets.db", Tail: NewTail(1000)}
	fill := func(m *Model) {
		m.tailRing = newTailRing(1000)
		var recs []*record
		for _, x := range append(tailMsgs(0, 200, 30), tailMsgs(1, 90, 10)...) {
			recs = append(recs, newTailRecord(x))
		}
		m.tailRing.add(recs)
	}
	for _, tt := range []struct {
		name string
		w, h int
		keys []string
	}{
		{"tail_140x40", 140, 40, []string{"t"}},
		{"tail_paused_filtered_80x24", 80, 24, []string{"t", "space", "/", "2", "2", "enter"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			golden.RequireEqual(t, []byte(runProgramSetup(t, tt.w, tt.h, opts, fill, goldenEvents(), tt.keys...)))
		})
	}
}

// The tap's cost on the stream's loop: closed (the view is not open) it
// is one atomic load per chunk; open it copies each record.
func BenchmarkTailRead(b *testing.B) {
	chunk := tailMsgs(0, 0, 500)
	for _, open := range []bool{false, true} {
		b.Run(fmt.Sprintf("open=%v", open), func(b *testing.B) {
			tl := NewTail(DefaultTailRecords)
			tl.setOpen(open)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				tl.Read(chunk)
				if i%20 == 0 {
					tl.take()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(chunk)), "ns/record")
		})
	}
}

// The screen's side: moving 500 records a frame into a full ring and a
// following view with a filter.
func BenchmarkTailRingAdd(b *testing.B) {
	c := &common{theme: newTheme(), keys: newKeyMap()}
	ring := newTailRing(DefaultTailRecords)
	v := newTailView(c, ring)
	v.SetSize(136, 30)
	v.list.query = "tail-1"
	recs := make([]*record, 500)
	for i := range recs {
		recs[i] = newTailRecord(tailMsgs(0, int64(i), 1)[0])
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		v.added(ring.add(recs))
	}
}
