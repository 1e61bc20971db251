package filter

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/kbatch-dev/kbatch/record"
)

// Where applies a Program to the records of a headless run (replay, a
// --sink) and counts what it kept and what did not evaluate, for the one
// line said at the end. It is safe for concurrent use.
type Where struct {
	p       *Program
	dec     Decoder
	seen    atomic.Int64
	matched atomic.Int64
	failed  atomic.Int64

	noted    atomic.Bool // firstErr is being set
	mu       sync.Mutex
	firstErr string // the first record that did not evaluate, and why
}

// NewWhere filters with p, decoding keys and values with dec (nil: none).
func NewWhere(p *Program, dec Decoder) *Where { return &Where{p: p, dec: dec} }

// Keep reports whether r matches; a record whose evaluation fails does not
// and is counted.
func (w *Where) Keep(r *record.Record) bool {
	ok, failed := w.keep(r)
	w.seen.Add(1)
	if ok {
		w.matched.Add(1)
	}
	if failed {
		w.failed.Add(1)
	}
	return ok
}

// keep is Keep without the counts, which Select adds once per goroutine:
// counters shared by the goroutines cost more than a cheap evaluation.
func (w *Where) keep(r *record.Record) (ok, failed bool) {
	a := activations.Get().(*activation)
	ok, failed = w.keepWith(a, r)
	activations.Put(a)
	return ok, failed
}

// keepWith is keep with a, which a goroutine keeps for many records.
func (w *Where) keepWith(a *activation, r *record.Record) (ok, failed bool) {
	ok, err := a.match(w.p, r, w.dec)
	if err != nil {
		if w.noted.CompareAndSwap(false, true) {
			w.mu.Lock()
			w.firstErr = fmt.Sprintf("%s[%d]@%d: %s", r.Topic, r.Partition, r.Offset, err)
			w.mu.Unlock()
		}
		return false, true
	}
	return ok, false
}

// selectRange is Select on at(lo) … at(hi-1), counted once, with one
// activation.
func (w *Where) selectRange(lo, hi int, at func(int) *record.Record, keep []bool) {
	a := activations.Get().(*activation)
	defer activations.Put(a)
	var matched, failed int64
	for i := lo; i < hi; i++ {
		ok, bad := w.keepWith(a, at(i))
		keep[i] = ok
		if ok {
			matched++
		}
		if bad {
			failed++
		}
	}
	w.seen.Add(int64(hi - lo))
	w.matched.Add(matched)
	w.failed.Add(failed)
}

// parallelMin is the smallest slice Select splits over goroutines: below
// it, starting them costs more than it saves.
const parallelMin = 256

// Select sets keep[i] to whether record at(i) matches, for i < n, as Keep
// does; a large slice is split over GOMAXPROCS goroutines, as a filter
// costs more than reading and writing a record (BENCHMARKS.md).
func (w *Where) Select(n int, at func(int) *record.Record, keep []bool) {
	workers := min(runtime.GOMAXPROCS(0), n/parallelMin)
	if workers <= 1 {
		w.selectRange(0, n, at, keep)
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		wg.Go(func() { w.selectRange(lo, hi, at, keep) })
	}
	wg.Wait()
}

// Counts are what Keep saw so far.
func (w *Where) Counts() (seen, matched, failed int64) {
	return w.seen.Load(), w.matched.Load(), w.failed.Load()
}

// Summary is the one line said at the end of a run, safe for a terminal:
//
//	--where: 12 of 1,000 records matched; 3 did not evaluate and count as no match (first payments[0]@17: no such key: amount)
func (w *Where) Summary() string {
	seen, matched, failed := w.Counts()
	s := fmt.Sprintf("--where: %s of %s record%s matched", group(matched), group(seen), plural(seen))
	if failed > 0 {
		w.mu.Lock()
		first := w.firstErr
		w.mu.Unlock()
		s += fmt.Sprintf("; %s did not evaluate and count as no match (first %s)", group(failed), first)
	}
	return record.String(s)
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// group writes n with thousands separators: 1,000,000.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
