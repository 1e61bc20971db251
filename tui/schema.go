package tui

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/schema"
)

// Decoder decodes keys and values that carry a schema (the Confluent wire
// format through a registry, or a local schema) without ever waiting:
// *schema.Decoder implements it. A schema not fetched yet answers Pending
// and is fetched in the background; SchemaNotes then says so.
type Decoder interface {
	TryDecode(topic string, isKey bool, b []byte) schema.Result
}

// SchemaNotes carries what a decoder's goroutines say to the screen: that
// a schema fetch ended (Ready) and the problems it met (Event). Wire its
// methods into schema.Options.Ready and schema.Options.Event. Its methods
// are safe for concurrent use and never block.
type SchemaNotes struct {
	mu     sync.Mutex
	events []schema.Event
	wake   chan struct{}
}

// maxSchemaNotes bounds the events kept between two screen updates.
const maxSchemaNotes = 100

// NewSchemaNotes returns notes for one screen.
func NewSchemaNotes() *SchemaNotes { return &SchemaNotes{wake: make(chan struct{}, 1)} }

// Ready says a schema fetch ended: records waiting for it can be decoded.
func (n *SchemaNotes) Ready(int) { n.signal() }

// Event passes a decoder's problem (once per schema id) to the events pane.
func (n *SchemaNotes) Event(e schema.Event) {
	n.mu.Lock()
	if len(n.events) < maxSchemaNotes {
		n.events = append(n.events, e)
	}
	n.mu.Unlock()
	n.signal()
}

func (n *SchemaNotes) signal() {
	select {
	case n.wake <- struct{}{}:
	default: // a wake-up is already pending: the screen takes everything then
	}
}

// schemaNotesMsg is what the notes held when the screen took them.
type schemaNotesMsg struct{ events []schema.Event }

// wait returns a command that waits for the next note (or ctx's end);
// Update re-arms it after each message.
func (n *SchemaNotes) wait(ctx context.Context) tea.Cmd {
	if n == nil {
		return nil
	}
	return func() tea.Msg {
		select {
		case <-n.wake:
		case <-ctx.Done():
			return nil
		}
		n.mu.Lock()
		evs := n.events
		n.events = nil
		n.mu.Unlock()
		return schemaNotesMsg{events: evs}
	}
}

// schemaNotes applies a message of the notes: a schema may have arrived,
// so results that were not final are asked for again, filters are applied
// again and the view on top is rebuilt; problems go to the events pane.
func (m *Model) schemaNotes(msg schemaNotesMsg) tea.Cmd {
	if m.c.schemas != nil {
		m.c.schemas.gen++
	}
	for _, e := range msg.events {
		text := e.Message
		if e.Topic != "" {
			text += " (topic " + e.Topic + ")"
		}
		ev := offsets.NewEvent(m.now(), codeSchema, offsets.Partition{}, text)
		m.notice(ev)
	}
	m.records.list.schemasChanged()
	if m.replay != nil {
		m.replay.list.schemasChanged()
	}
	if r, ok := m.top().(interface{ rebuild() }); ok {
		r.rebuild()
	}
	return m.opts.SchemaNotes.wait(m.ctx)
}

// codeSchema is the events pane's code for a decoder's problem.
const codeSchema = "schema"

// schemasChanged filters again when a filter is on: a record whose schema
// just arrived may match its decoded text now.
func (l *recordList) schemasChanged() {
	if l.query == "" {
		return
	}
	sel := l.cur.sel
	l.refilter()
	l.restoreSel(sel)
}

// decoding is the screen's use of a Decoder. Results are kept on the
// record (decodedFields), so a record is decoded once however often it is
// drawn or filtered, and only a record that is drawn, filtered or opened
// is decoded at all: never every record of a catch-up. It is used from
// the update loop only.
type decoding struct {
	dec Decoder
	// gen counts the schema fetches that ended. A result that was not
	// final (failed, perhaps because the registry was down) is asked for
	// again once gen moved on.
	gen int
}

func newDecoding(d Decoder) *decoding {
	if d == nil {
		return nil
	}
	return &decoding{dec: d}
}

// maxKeptJSON bounds the decoded text a record keeps; a larger one is
// decoded again when it is needed.
const maxKeptJSON = 256 << 10

// decodedFields are a record's decoded key and value, once asked for.
type decodedFields struct {
	key, value *decodedField
}

type decodedField struct {
	schema.Result
	gen int
	cut bool // JSON holds only the start of a text too large to keep
}

// final reports a result that cannot change: decoded, or no schema at all.
func (f *decodedField) final() bool {
	return f.Status == schema.Decoded || f.Status == schema.NotFramed
}

// result decodes r's key (isKey) or value, or returns what it kept. The
// JSON of a result too large to keep is decoded again, unless start says
// its first maxKeptJSON bytes are enough (a preview). A nil decoding
// decodes nothing.
func (d *decoding) result(r *record, isKey, start bool) schema.Result {
	f, slot := r.Value, &r.decoded.value
	if isKey {
		f, slot = r.Key, &r.decoded.key
	}
	if d == nil || f.null() || len(f.Data) == 0 {
		return schema.Result{Status: schema.NotFramed}
	}
	if k := *slot; k != nil && (k.final() || k.gen == d.gen) && (start || !k.cut) {
		return k.Result
	}
	var res schema.Result
	if f.truncated() {
		// The cut bytes would not decode; say why instead of blaming the
		// schema. A topic read with a local schema shows them raw.
		fr, ok := schema.ParseFrame(f.Data)
		if !ok {
			return schema.Result{Status: schema.NotFramed}
		}
		res = schema.Result{Status: schema.Failed, SchemaID: fr.ID,
			Reason: fmt.Sprintf("schema id %d: not decoded: only the first %s are kept in memory", fr.ID, formatBytes(int64(len(f.Data))))}
	} else {
		res = d.dec.TryDecode(r.Topic, isKey, f.Data)
	}
	if res.Status == schema.Pending {
		return res
	}
	kept := &decodedField{Result: res, gen: d.gen}
	if len(res.JSON) > maxKeptJSON {
		kept.JSON, kept.cut = res.JSON[:maxKeptJSON], true
	}
	*slot = kept
	return res
}

// preview is the one-line, escaped start of r's key or value for a list
// cell: the decoded JSON when it decodes, "decoding…" while its schema is
// on its way, else the bytes as they are. pending reports the second.
func (d *decoding) preview(r *record, isKey bool, width int) (s string, pending bool) {
	f := r.Value
	if isKey {
		f = r.Key
	}
	switch res := d.result(r, isKey, true); res.Status {
	case schema.Decoded:
		s, _ := jsonText([]byte(res.JSON), width)
		return s, false
	case schema.Pending:
		return "decoding… " + previewField(f, width), true
	}
	return previewField(f, width), false
}

// schemaIDs lists the schema ids the samples carry (keys and values), with
// the subject and version of those already fetched: "3 (orders-value v1),
// 7". Reading an id takes the 5-byte header only; nothing is decoded but
// what the batch detail shows anyway.
func (d *decoding) schemaIDs(recs []*record) string {
	names := map[int]string{}
	for _, r := range recs {
		for _, isKey := range []bool{true, false} {
			f := r.Value
			if isKey {
				f = r.Key
			}
			fr, ok := schema.ParseFrame(f.Data)
			if !ok || f.null() {
				continue
			}
			if _, seen := names[fr.ID]; !seen {
				names[fr.ID] = ""
			}
			if res := d.result(r, isKey, true); res.Subject != "" {
				names[fr.ID] = res.Subject + " v" + strconv.Itoa(res.Version)
			}
		}
	}
	ids := make([]int, 0, len(names))
	for id := range names {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
		if n := names[id]; n != "" {
			parts[i] += " (" + krecord.String(n) + ")"
		}
	}
	return strings.Join(parts, ", ")
}
