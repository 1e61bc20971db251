package consumer

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// GroupCommitter writes the stream's acked next offsets to a consumer
// group (watch --commit-group), so a team or a production consumer can
// start where the stream stands; *kafka.GroupWriter implements it.
// CommitGroup is called from one goroutine of the stream at a time, never
// on the stream's loop. An error wrapping *kafka.GroupActiveError means
// the group has live members, one wrapping *kafka.GroupPermissionError a
// permission the user lacks: the stream then commits no more.
type GroupCommitter interface {
	Group() string
	CommitGroup(next map[offsets.Partition]int64) error
}

// groupRetryMax bounds the wait between two failed group commits.
const groupRetryMax = 30 * time.Second

// groupCommits follows the stream's acks with commits to a group, off the
// loop. The store is the source of truth and is written first: a commit
// is made only for positions already acked, a failed one never undoes or
// holds back an ack, and it is retried with whatever is acked by then
// (latest wins: positions acked while a commit runs are merged into the
// next one). A group with live members, or a permission the user lacks
// (asking again does not grant it), stops the commits for good.
//
// The loop calls offer after each ack and close once, at its end; the
// results come back to the loop on results (closed by the goroutine),
// where they become notices.
type groupCommits struct {
	c     GroupCommitter
	retry time.Duration // first wait after a failure; doubles to groupRetryMax

	mu   sync.Mutex
	want map[offsets.Partition]int64 // acked, not yet committed

	wake    chan struct{} // cap 1: want changed
	quit    chan struct{} // closed by close: one last commit, then stop
	results chan groupResult
	// offered is the loop's own copy of the positions it offered, so an
	// ack offers only the partitions that moved. Loop goroutine only.
	offered map[offsets.Partition]int64
}

// groupResult is a change in how the group follows the stream.
type groupResult struct {
	code string // offsets.CodeGroupCommit, ...Failed, ...Stopped
	n    int    // partitions written (CodeGroupCommit)
	err  error
	wait time.Duration // CodeGroupCommitFailed: until the next attempt
}

func newGroupCommits(c GroupCommitter, retry time.Duration) *groupCommits {
	if retry <= 0 {
		retry = time.Second
	}
	g := &groupCommits{c: c, retry: retry, want: map[offsets.Partition]int64{},
		wake: make(chan struct{}, 1), quit: make(chan struct{}), results: make(chan groupResult, 4),
		offered: map[offsets.Partition]int64{}}
	go g.run()
	return g
}

// offer hands over the stream's acked next offsets (stored, -1 for none)
// after an ack; only those that moved since the last offer go to the
// committer.
func (g *groupCommits) offer(stored map[offsets.Partition]int64) {
	var moved map[offsets.Partition]int64
	for p, off := range stored {
		if old, ok := g.offered[p]; off < 0 || (ok && old == off) {
			continue
		}
		if moved == nil {
			moved = map[offsets.Partition]int64{}
		}
		moved[p] = off
		g.offered[p] = off
	}
	if moved == nil {
		return
	}
	g.mu.Lock()
	maps.Copy(g.want, moved)
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// close asks for one last commit of what is acked and the goroutine's end;
// the caller then reads results until it is closed.
func (g *groupCommits) close() { close(g.quit) }

func (g *groupCommits) take() map[offsets.Partition]int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.want) == 0 {
		return nil
	}
	out := g.want
	g.want = map[offsets.Partition]int64{}
	return out
}

// putBack returns positions a failed commit did not write, unless a newer
// offer replaced them.
func (g *groupCommits) putBack(next map[offsets.Partition]int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for p, off := range next {
		if _, newer := g.want[p]; !newer {
			g.want[p] = off
		}
	}
}

func (g *groupCommits) run() {
	defer close(g.results)
	var (
		failures int
		wait     = g.retry
		retry    <-chan time.Time
		quitting bool
		ever     bool // a commit succeeded
	)
	for {
		if !quitting {
			select {
			case <-g.wake:
			case <-retry:
			case <-g.quit:
				quitting = true
			}
		}
		next := g.take()
		if next == nil {
			if quitting {
				return
			}
			continue
		}
		err := g.c.CommitGroup(next)
		switch {
		case err == nil:
			if !ever || failures > 0 {
				g.results <- groupResult{code: offsets.CodeGroupCommit, n: len(next), err: nil, wait: 0}
			}
			ever, failures, wait, retry = true, 0, g.retry, nil
			if quitting {
				return
			}
		case errors.As(err, new(*kafka.GroupActiveError)), errors.As(err, new(*kafka.GroupPermissionError)):
			g.results <- groupResult{code: offsets.CodeGroupCommitStopped, err: err}
			<-g.quit // results is closed only after close
			return
		default:
			g.putBack(next)
			failures++
			if quitting {
				g.results <- groupResult{code: offsets.CodeGroupCommitFailed, err: err}
				return
			}
			g.results <- groupResult{code: offsets.CodeGroupCommitFailed, err: err, wait: wait}
			retry = time.After(wait)
			wait = min(2*wait, groupRetryMax)
		}
	}
}

// startGroup starts the group committer (--commit-group). Its first
// commit names the partitions no batch read yet too, at the start
// positions the store was given for them (persistStarts), so the group
// holds the store's next offsets, not only those batches moved.
func (l *loop) startGroup() {
	if l.cfg.GroupCommit == nil {
		return
	}
	l.group = newGroupCommits(l.cfg.GroupCommit, l.cfg.GroupRetry)
	l.groupBase = map[offsets.Partition]int64{}
	for _, st := range l.s.started.Starts {
		if l.redeliver == nil || !hasRange(l.redeliver, st.Partition) {
			l.groupBase[st.Partition] = st.NextOffset
		}
	}
}

// offerGroup offers the stream's acked positions to the group committer,
// after an ack (--commit-group).
func (l *loop) offerGroup() {
	if l.group == nil {
		return
	}
	stored := make(map[offsets.Partition]int64, len(l.states))
	for _, ps := range l.states {
		off := ps.stored
		if base, ok := l.groupBase[ps.p]; ok && off < 0 {
			off = base
		}
		stored[ps.p] = off
	}
	l.group.offer(stored)
}

// onGroupResult reports a change in how the group follows the stream as
// a notice (recorded in the store's event log like the others).
func (l *loop) onGroupResult(r groupResult) {
	name := offsets.QuoteName(l.group.c.Group())
	var msg string
	switch r.code {
	case offsets.CodeGroupCommit:
		msg = fmt.Sprintf("consumer group %s holds the stream's acked offsets (%s written)", name, offsets.CountPartitions(r.n))
	case offsets.CodeGroupCommitStopped:
		msg = fmt.Sprintf("commits to consumer group %s stopped: %v; the stream goes on and its store keeps the offsets", name, r.err)
	case offsets.CodeGroupCommitFailed:
		if r.wait > 0 {
			msg = fmt.Sprintf("commit to consumer group %s failed, tried again in %s: %v; the batch stays acked", name, r.wait, r.err)
		} else {
			msg = fmt.Sprintf("commit to consumer group %s failed as the stream ended: %v; the store holds the acked offsets (kbatch offsets export --to-group writes them)", name, r.err)
		}
	}
	l.notice(offsets.NewEvent(time.Now(), r.code, offsets.Partition{Partition: -1}, msg))
}

// closeGroup makes the last commit of what is acked and reports the
// results still to come; the loop calls it once, after its last ack.
func (l *loop) closeGroup() {
	if l.group == nil {
		return
	}
	l.offerGroup()
	l.group.close()
	for r := range l.group.results {
		l.onGroupResult(r)
	}
}

// groupResults is the channel of the group committer's results; nil (a
// case that never fires) without --commit-group.
func (l *loop) groupResults() <-chan groupResult {
	if l.group == nil {
		return nil
	}
	return l.group.results
}
