package tui

import (
	"strings"

	"github.com/kbatch-dev/kbatch/filter"
	krecord "github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/schema"
)

// A query of / (the search, the replay and tail views' filters) and of f
// that starts with exprPrefix is a CEL expression over the decoded record
// (package filter), not a substring: ?value.amount > 90.0 keeps the
// records whose value has an amount above 90. Any other query is a
// substring, as before, so no substring a person types changes meaning
// unless it starts with "?".
const exprPrefix = "?"

func isExpr(q string) bool { return strings.HasPrefix(q, exprPrefix) }

// maxExprRecords bounds the records an expression query is evaluated on
// at once on the screen's goroutine, the newest ones: at a few µs a
// record (BENCHMARKS.md) that keeps a key press under about 100 ms where
// a tail of a million records would take seconds. The status says when
// older records were not searched.
const maxExprRecords = 20_000

// exprFrom is the first index of n records (oldest first) that query q
// is evaluated on: all of them for a substring, the newest
// maxExprRecords for an expression.
func exprFrom(q string, n int) int {
	if !isExpr(q) || n <= maxExprRecords {
		return 0
	}
	return n - maxExprRecords
}

// maxPrograms bounds the compiled expressions kept: one per query typed,
// and a query is typed a character at a time.
const maxPrograms = 64

// wheres keeps the compiled program, or the compile error, of each
// expression query, so a list refiltered on every key press compiles
// each text once. Only the screen's goroutine uses it.
type wheres map[string]compiled

type compiled struct {
	p   *filter.Program
	err error
}

// program compiles the expression of query q (after exprPrefix), once.
func (c *common) program(q string) (*filter.Program, error) {
	if e, ok := c.wheres[q]; ok {
		return e.p, e.err
	}
	if c.wheres == nil || len(c.wheres) >= maxPrograms {
		c.wheres = wheres{}
	}
	p, err := filter.Compile(strings.TrimPrefix(q, exprPrefix))
	c.wheres[q] = compiled{p, err}
	return p, err
}

// queryProblem is why an expression query matches nothing at all (it does
// not compile), for the status; "" for a substring or a good expression.
func (c *common) queryProblem(q string) string {
	if !isExpr(q) {
		return ""
	}
	if _, err := c.program(q); err != nil {
		return err.Error()
	}
	return ""
}

// matches is the screen's one matcher: an expression query (isExpr) is
// evaluated on r, its key and value decoded as the screen shows them
// (a schema still on its way: the bytes); any other query is a substring
// of r's key or value (decoding.matches). An expression that does not
// compile, or fails on r (a missing field), matches nothing.
func (c *common) matches(r *record, q string) bool {
	if !isExpr(q) {
		return c.schemas.matches(r, q)
	}
	p, err := c.program(q)
	if err != nil {
		return false
	}
	var dec filter.Decoder
	if c.schemas != nil {
		dec = keptDecoder{d: c.schemas, r: r}
	}
	ok, err := p.Match(r.asRecord(), dec)
	return ok && err == nil
}

// asRecord is r as the filter reads it; a key or value longer than the
// screen keeps is its first bytes.
func (r *record) asRecord() *krecord.Record {
	m := &krecord.Record{Topic: r.Topic, Partition: r.Partition.Partition, Offset: r.Offset, Timestamp: r.Timestamp}
	if !r.Key.null() {
		m.Key = r.Key.Data
		if m.Key == nil {
			m.Key = []byte{}
		}
	}
	if !r.Value.null() {
		m.Value = r.Value.Data
		if m.Value == nil {
			m.Value = []byte{}
		}
	}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, &krecord.Header{Key: h.Key, Value: h.Value.Data})
	}
	return m
}

// keptDecoder decodes through the screen's cache of decoded keys and
// values (decoding.result): the screen's goroutine only.
type keptDecoder struct {
	d *decoding
	r *record
}

func (k keptDecoder) Decoded(_ *krecord.Record, isKey bool) (string, bool) {
	res := k.d.result(k.r, isKey, false)
	return res.JSON, res.Status == schema.Decoded
}

// liveDecoder decodes on any goroutine without the screen's cache (the
// broker search's reader): pending is set when a schema was still on its
// way, so the record is handed to the screen to be matched again.
type liveDecoder struct {
	dec     Decoder
	pending bool
}

func (l *liveDecoder) Decoded(r *krecord.Record, isKey bool) (string, bool) {
	b := r.Value
	if isKey {
		b = r.Key
	}
	if len(b) == 0 {
		return "", false
	}
	res := l.dec.TryDecode(r.Topic, isKey, b)
	if res.Status == schema.Pending {
		l.pending = true
	}
	return res.JSON, res.Status == schema.Decoded
}
