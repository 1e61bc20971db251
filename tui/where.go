package tui

import (
	"slices"
	"strings"
	"sync/atomic"

	tea "charm.land/bubbletea/v2"

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

// whereJob evaluates an expression query over records off the screen's
// goroutine (a tea.Cmd), so a key press or a new record never waits for
// evaluations, however many records the screen keeps. Its result goes to
// apply on the screen's goroutine; each owner keeps the id of the job it
// started last and drops the result of any other (a stale query).
type whereJob struct {
	id   uint64
	prog *filter.Program
	dec  Decoder // nil: no schemas
	recs []*record
	// apply takes the indexes into recs that match, on the screen's
	// goroutine.
	apply func(hits []int)
	// stopped is set when its owner no longer wants the result: run
	// stops early, so a query typed a character at a time over a long
	// tail does not leave a run per character.
	stopped atomic.Bool
}

// stop tells j (nil: none) that its result will be dropped.
func (j *whereJob) stop() {
	if j != nil {
		j.stopped.Store(true)
	}
}

// whereDoneMsg is what a whereJob found.
type whereDoneMsg struct {
	job  *whereJob
	hits []int
}

// run evaluates the job: the command's body, on a goroutine of its own.
// Keys and values are decoded with the decoder as it stands (a schema
// still on its way: the bytes, as the screen shows them), not through the
// screen's cache, which is the screen goroutine's.
func (j *whereJob) run() tea.Msg {
	var hits []int
	for i, r := range j.recs {
		if i%256 == 0 && j.stopped.Load() {
			return whereDoneMsg{job: j}
		}
		var fd filter.Decoder
		if j.dec != nil {
			fd = &liveDecoder{dec: j.dec}
		}
		if ok, err := j.prog.Match(r.asRecord(), fd); ok && err == nil {
			hits = append(hits, i)
		}
	}
	return whereDoneMsg{job: j, hits: hits}
}

// evaluate starts a whereJob of expression query q (which compiles) over
// recs, copied: the screen's slices change while it runs. Its command
// goes out with the answer to the message being handled (Model.Update).
func (c *common) evaluate(q string, recs []*record, apply func(hits []int)) *whereJob {
	p, _ := c.program(q)
	c.jobSeq++
	j := &whereJob{id: c.jobSeq, prog: p, recs: slices.Clone(recs), apply: apply}
	if c.schemas != nil {
		j.dec = c.schemas.dec
	}
	c.running = append(c.running, j)
	c.queued = append(c.queued, j.run)
	return j
}

// whereDone hands a job's result to its owner.
func (c *common) whereDone(msg whereDoneMsg) {
	c.running = slices.DeleteFunc(c.running, func(j *whereJob) bool { return j == msg.job })
	msg.job.apply(msg.hits)
}

// takeQueued returns the commands of the jobs started since the last call.
func (c *common) takeQueued() []tea.Cmd {
	q := c.queued
	c.queued = nil
	return q
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
