package sim

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
)

// fact is something that sets a stored position (docs/design.md §2.4: the stored
// position equals the until of the last acked batch or a newer seek or
// offsets set).
type fact struct {
	at   time.Time
	kind string // start, seek, set, new-partition, ack
	part int32
	off  int64
	// ack: the batch's ranges and when it was first cut (seeks made after
	// that are stored again by its ack).
	b   *offsets.Batch
	cut time.Time
	// start: whether the run re-delivers a pending batch (seeks kept
	// across the restart stay then).
	keepSeeks bool
}

// checkPositions compares the stored positions after a run with what the
// history says they must be.
func (r *runner) checkPositions(a *active) {
	if a.rec.ended != nil && a.rec.ended.Err != nil && !a.store.dead() {
		r.violate("run %d failed on its own: %v", a.rec.idx, a.rec.ended.Err)
	}
	if e := a.rec.ended; e != nil && e.Reason == "batches" && e.Batches != a.rec.flags.MaxBatches {
		r.violate("batches: run %d with --batches %d ended after %d batches", a.rec.idx, a.rec.flags.MaxBatches, e.Batches)
	}
	info, ok, err := a.bolt.Stream(StreamName)
	if err != nil || !ok {
		r.violate("run %d: reading the store: %v (stream found: %v)", a.rec.idx, err, ok)
		return
	}
	batches, err := a.bolt.Batches(StreamName, 0)
	if err != nil {
		r.violate("run %d: reading the batch log: %v", a.rec.idx, err)
		return
	}
	events, err := a.bolt.Events(StreamName, 0)
	if err != nil {
		r.violate("run %d: reading the event log: %v", a.rec.idx, err)
		return
	}
	var facts []fact
	r.mu.Lock()
	for _, rec := range r.runs {
		if rec.started == nil {
			continue
		}
		red := rec.started.Redelivering
		for _, st := range rec.started.Starts {
			if red != nil && hasRange(red, st.Partition.Partition) {
				continue
			}
			facts = append(facts, fact{at: rec.startAt, kind: "start", part: st.Partition.Partition, off: st.NextOffset, keepSeeks: red != nil})
		}
		if len(rec.started.Starts) == 0 || red != nil {
			facts = append(facts, fact{at: rec.startAt, kind: "start", part: -1, keepSeeks: red != nil})
		}
	}
	for _, s := range r.sets {
		facts = append(facts, fact{at: s.at, kind: "set", part: s.part, off: s.off})
	}
	for _, b := range batches {
		if b.State != offsets.StateAcked {
			continue
		}
		cut := b.Time
		if t, ok := r.firstCut[cutKey(b)]; ok && t.Before(cut) {
			cut = t
		}
		b := b
		facts = append(facts, fact{at: b.AckedAt, kind: "ack", b: &b, cut: cut})
	}
	r.mu.Unlock()
	for _, e := range events {
		switch e.Code {
		case offsets.CodeSeek, offsets.CodeNewPartition:
			if e.To >= 0 {
				facts = append(facts, fact{at: e.Time, kind: e.Code, part: e.Partition, off: e.To})
			}
		}
	}
	sort.SliceStable(facts, func(i, j int) bool { return facts[i].at.Before(facts[j].at) })
	pos := map[int32]int64{}
	why := map[int32]string{}
	type kept struct {
		off int64
		at  time.Time
	}
	seeks := map[int32]kept{}
	for _, f := range facts {
		switch f.kind {
		case "start":
			if !f.keepSeeks {
				clear(seeks)
			}
			if f.part >= 0 {
				// The run started this partition where it says (an explicit
				// -o, say): a seek kept from before no longer applies to it.
				pos[f.part], why[f.part] = f.off, fmt.Sprintf("start of a run at %s", f.at.Format("15:04:05.000"))
				delete(seeks, f.part)
			}
		case offsets.CodeSeek:
			pos[f.part], why[f.part] = f.off, fmt.Sprintf("seek at %s", f.at.Format("15:04:05.000"))
			seeks[f.part] = kept{f.off, f.at}
		case "set":
			pos[f.part], why[f.part] = f.off, fmt.Sprintf("offsets set at %s", f.at.Format("15:04:05.000"))
			delete(seeks, f.part)
		case offsets.CodeNewPartition:
			pos[f.part], why[f.part] = f.off, "new partition"
		case "ack":
			for _, rg := range f.b.Ranges {
				pos[rg.Partition.Partition], why[rg.Partition.Partition] = rg.Until, fmt.Sprintf("ack of batch %d", f.b.ID)
			}
			for p, k := range seeks {
				if k.at.After(f.cut) {
					pos[p], why[p] = k.off, fmt.Sprintf("seek at %s, stored again by the ack of batch %d cut before it", k.at.Format("15:04:05.000"), f.b.ID)
				} else {
					delete(seeks, p)
				}
			}
		}
	}
	for p, want := range pos {
		got, ok := info.Next[offsets.Partition{Topic: Topic, Partition: p}]
		switch {
		case !ok:
			r.violate("stored position: after run %d, p%d has none; want %d (%s)", a.rec.idx, p, want, why[p])
		case got != want:
			r.violate("stored position: after run %d, p%d is %d; want %d (%s)", a.rec.idx, p, got, want, why[p])
		}
	}
}

func hasRange(b *offsets.Batch, part int32) bool {
	for _, rg := range b.Ranges {
		if rg.Partition.Partition == part {
			return true
		}
	}
	return false
}

func sameRanges(a, b []offsets.BatchRange) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Range != b[i].Range {
			return false
		}
	}
	return true
}

// check runs the invariants over the whole history.
func (r *runner) check() {
	if r.h.Seed%2 == 1 && len(r.runs) > 1 {
		// The second start moved the first run's file (openStore).
		if _, err := os.Stat(r.path + ".moved"); err != nil {
			r.violate("move: the first run's store file was not moved into the folder: %v", err)
		}
	}
	st, err := r.openStore(offsets.OpenOptions{ReadOnly: true})
	if err != nil {
		r.violate("opening the store: %v", err)
		return
	}
	defer func() { _ = st.Close() }()
	batches, err := st.Batches(StreamName, 0)
	if err != nil {
		r.violate("batch log: %v", err)
		return
	}
	events, err := st.Events(StreamName, 0)
	if err != nil {
		r.violate("event log: %v", err)
		return
	}
	final, _, err := st.Stream(StreamName)
	if err != nil {
		r.violate("stream: %v", err)
		return
	}
	sort.Slice(batches, func(i, j int) bool { return batches[i].ID < batches[j].ID })
	// The processor's deliveries by batch (id and ranges).
	byKey := map[string]*delivery{}
	for i := range r.deliveries {
		d := &r.deliveries[i]
		byKey[cutKey(d.batch)] = d
	}
	dataLoss := func(part int32, o int64) bool {
		for _, e := range events {
			if e.Code == offsets.CodeDataLoss && e.Partition == part && (e.LogStart < 0 || e.LogStart > o) {
				return true
			}
		}
		for _, rec := range r.runs {
			for _, ev := range rec.events {
				if n, ok := ev.(*consumer.Notice); ok && n.Code == offsets.CodeDataLoss && n.Partition == part && (n.LogStart < 0 || n.LogStart > o) {
					return true
				}
			}
		}
		return false
	}
	userMoved := map[int32]map[int64]bool{} // seek and set targets
	for _, e := range events {
		// The store's offset-out-of-range events count as the run's
		// notices do (below): where an explicit offset above the high
		// watermark went. A run killed right after its start leaves the
		// notice unread on its channel, but Start stored the event.
		if (e.Code == offsets.CodeSeek || e.Code == offsets.CodeSet || e.Code == offsets.CodeNewPartition || e.Code == offsets.CodeOutOfRange) && e.To >= 0 {
			if userMoved[e.Partition] == nil {
				userMoved[e.Partition] = map[int64]bool{}
			}
			userMoved[e.Partition][e.To] = true
		}
	}
	// Explicit starts are the person's choice too, and so is where an
	// explicit offset above the high watermark went (--reset).
	for _, rec := range r.runs {
		for _, st := range rec.started.Starts {
			explicit := st.Source == offsets.SourceExplicit || st.Source == offsets.SourceTimestamp
			for _, ev := range rec.events {
				if n, ok := ev.(*consumer.Notice); ok && n.Code == offsets.CodeOutOfRange && n.Partition == st.Partition.Partition {
					explicit = true
				}
			}
			if explicit {
				if userMoved[st.Partition.Partition] == nil {
					userMoved[st.Partition.Partition] = map[int64]bool{}
				}
				userMoved[st.Partition.Partition][st.NextOffset] = true
			}
		}
	}
	for _, s := range r.sets {
		if userMoved[s.part] == nil {
			userMoved[s.part] = map[int64]bool{}
		}
		userMoved[s.part][s.off] = true
	}
	planned := map[uint64][][]offsets.BatchRange{}
	for _, rec := range r.runs {
		if rec.pending != nil {
			planned[rec.pending.ID] = append(planned[rec.pending.ID], rec.pending.Ranges)
		}
	}

	// Each acked batch: delivered, its records exactly the ones in its
	// ranges, a re-delivered one with exactly its planned ranges.
	acked := []offsets.Batch{}
	for _, b := range batches {
		if b.State != offsets.StateAcked {
			continue
		}
		acked = append(acked, b)
		d := byKey[cutKey(b)]
		if d == nil {
			r.violate("batch %d %s is acked but was never given to the processor", b.ID, rangesText(b.Ranges))
			continue
		}
		if b.Redelivered {
			ok := false
			for _, rs := range planned[b.ID] {
				ok = ok || sameRanges(rs, b.Ranges)
			}
			if !ok {
				r.violate("batch %d is stored as re-delivered with ranges %s, but the batch planned before had %v", b.ID, rangesText(b.Ranges), plannedText(planned[b.ID]))
			}
		}
		r.checkDelivery(b, d, dataLoss)
	}
	// A run that found a pending batch re-delivers it first, unchanged.
	for _, rec := range r.runs {
		red := rec.started.Redelivering
		if red == nil {
			continue
		}
		for _, ev := range rec.events {
			be, ok := ev.(*consumer.BatchEvent)
			if !ok {
				continue
			}
			if be.Batch.ID != red.ID || !be.Batch.Redelivered || !sameRanges(be.Batch.Ranges, red.Ranges) {
				r.violate("run %d: the first batch is %d %s (redelivered %v), not the pending batch %d %s re-delivered", rec.idx, be.Batch.ID, rangesText(be.Batch.Ranges), be.Batch.Redelivered, red.ID, rangesText(red.Ranges))
			}
			break
		}
	}
	r.checkChains(acked, byKey, userMoved, dataLoss, final.Next)
}

func plannedText(rss [][]offsets.BatchRange) string {
	if len(rss) == 0 {
		return "none (no start found it pending)"
	}
	s := ""
	for _, rs := range rss {
		s += "[" + rangesText(rs) + "]"
	}
	return s
}

// checkDelivery checks an acked batch's records against the oracle.
func (r *runner) checkDelivery(b offsets.Batch, d *delivery, dataLoss func(int32, int64) bool) {
	got := map[int32]map[int64]bool{}
	for _, m := range d.recs {
		if got[m.Partition] == nil {
			got[m.Partition] = map[int64]bool{}
		}
		in := false
		for _, rg := range b.Ranges {
			in = in || (rg.Partition.Partition == m.Partition && m.Offset >= rg.From && m.Offset < rg.Until)
		}
		if !in {
			r.violate("batch %d delivered p%d@%d outside its ranges %s", b.ID, m.Partition, m.Offset, rangesText(b.Ranges))
		}
		if got[m.Partition][m.Offset] {
			r.violate("batch %d delivered p%d@%d twice", b.ID, m.Partition, m.Offset)
		}
		got[m.Partition][m.Offset] = true
		want := r.c.rec(m.Partition, m.Offset)
		switch {
		case want == nil:
			r.violate("batch %d delivered p%d@%d, which no producer wrote", b.ID, m.Partition, m.Offset)
		case want.Aborted && !d.uncommitted && !r.opt.StrictAborted:
			// kfake answers a read_committed fetch that reaches the
			// request's MaxBytes inside a partition without that
			// partition's aborted transactions (01_fetch.go: "break
			// full" skips the AbortedTransactions block), so such
			// records reach a read_committed consumer from kfake; a
			// real broker lists them.
		case want.Aborted && !d.uncommitted:
			r.violate("batch %d (read committed) delivered p%d@%d of an aborted transaction", b.ID, m.Partition, m.Offset)
		case !sameBytes(want.Key, m.Key) || !sameBytes(want.Value, m.Value) || len(want.Headers) != len(m.Headers):
			r.violate("batch %d delivered p%d@%d with other bytes than produced", b.ID, m.Partition, m.Offset)
		default:
			for i, h := range want.Headers {
				if h.Key != string(m.Headers[i].Key) || !bytes.Equal(h.Value, m.Headers[i].Value) {
					r.violate("batch %d delivered p%d@%d with other header %d than produced", b.ID, m.Partition, m.Offset, i)
				}
			}
		}
	}
	for _, rg := range b.Ranges {
		part := rg.Partition.Partition
		var n int64
		for o := rg.From; o < rg.Until; o++ {
			if got[part][o] {
				n++
			}
			rc := r.c.rec(part, o)
			if rc == nil || (rc.Aborted && !d.uncommitted) || got[part][o] {
				continue
			}
			del := r.c.deletedAt(part, o)
			switch {
			case del.IsZero() || del.After(d.at):
				r.violate("batch %d: p%d@%d is in its range [%d,%d) but was not delivered", b.ID, part, o, rg.From, rg.Until)
			case !b.Redelivered:
				r.violate("batch %d: its range p%d [%d,%d) claims offset %d, deleted before it was read", b.ID, part, rg.From, rg.Until, o)
			case !dataLoss(part, o):
				r.violate("batch %d (re-delivered): p%d@%d was deleted before it was read again, and no data-loss event says so", b.ID, part, o)
			}
		}
		if n != rg.Records && !b.Redelivered {
			r.violate("batch %d: range p%d [%d,%d) says %d records, the processor got %d", b.ID, part, rg.From, rg.Until, rg.Records, n)
		}
	}
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// checkChains walks every partition's acked ranges in batch order:
// contiguous except at marked jumps, nothing existing skipped unless the
// person chose it, loss always loud, and in the end everything up to the
// final run's high watermark delivered.
func (r *runner) checkChains(acked []offsets.Batch, byKey map[string]*delivery, userMoved map[int32]map[int64]bool, dataLoss func(int32, int64) bool, stored map[offsets.Partition]int64) {
	if r.drainR == nil || r.drainR.ended == nil || r.drainR.ended.Reason != "until-end" {
		return // liveness already failed; the chains would only repeat it
	}
	parts := r.c.partitions()
	for part := int32(0); part < parts; part++ {
		// The baseline: where the partition was first read from.
		cursor, seen, seenAt := int64(-1), false, time.Time{}
		for _, rec := range r.runs {
			for _, st := range rec.started.Starts {
				if st.Partition.Partition == part && !seen {
					cursor, seen, seenAt = st.NextOffset, true, rec.startAt
				}
			}
			for _, ev := range rec.events {
				if n, ok := ev.(*consumer.Notice); ok && n.Code == offsets.CodeNewPartition && n.Partition == part && n.To >= 0 && (!seen || n.Time.Before(seenAt)) {
					cursor, seen, seenAt = n.To, true, n.Time
				}
			}
		}
		if !seen {
			continue
		}
		lastRun := -1
		step := func(from int64, jump string, run *runRec, firstInRun bool, at time.Time, what string) {
			if from == cursor {
				return
			}
			// Seeks, and explicit offsets above the high watermark
			// (offset-out-of-range, then --reset), are the person's
			// choice.
			user := jump == offsets.CodeSeek || jump == offsets.CodeOutOfRange || userMoved[part][from]
			// A batch planned after an explicit start and re-delivered
			// by a later run carries that run's choice.
			for _, rec := range r.runs {
				for _, st := range rec.started.Starts {
					if st.Partition.Partition == part && st.NextOffset == from && (st.Source == offsets.SourceExplicit || st.Source == offsets.SourceTimestamp) {
						user = true
					}
				}
			}
			if firstInRun && run != nil {
				for _, st := range run.started.Starts {
					if st.Partition.Partition == part && st.NextOffset == from {
						switch st.Source {
						case offsets.SourceExplicit, offsets.SourceTimestamp:
							user = true
						case offsets.SourceResetEarly, offsets.SourceResetLatest:
							// --reset chooses only where there is no
							// position; one lost to retention is a data-loss
							// jump, marked.
							if _, had := run.before.Next[st.Partition]; !had {
								r.violate("p%d: run %d started it by --reset at %d though it had been read before (from %d): its position was never stored", part, run.idx, from, cursor)
								user = true
							}
						}
					}
				}
			}
			if jump == "" && !user {
				r.violate("contiguity: p%d %s starts at %d, the previous range ended at %d, and no jump is marked", part, what, from, cursor)
			}
			// A seek or offsets set back that no batch followed moved
			// the position before this jump.
			back := false
			for t := range userMoved[part] {
				back = back || (t <= from && t < cursor)
			}
			if from < cursor && !user && !back {
				r.violate("duplicates: p%d %s starts at %d, before the previous range's end %d (jump %q), outside a re-delivered batch", part, what, from, cursor, jump)
			}
			var live, lost []int64
			for o := cursor; o < from; o++ {
				rc := r.c.rec(part, o)
				if rc == nil || rc.Aborted {
					continue
				}
				if del := r.c.deletedAt(part, o); !del.IsZero() && del.Before(at) {
					lost = append(lost, o)
				} else {
					live = append(live, o)
				}
			}
			if len(live) > 0 && !user {
				r.violate("skipped: p%d %s jumps from %d to %d (jump %q), skipping %d records that still exist (first %d)", part, what, cursor, from, jump, len(live), live[0])
			}
			if len(lost) > 0 && !user && !dataLoss(part, lost[0]) {
				r.violate("silent loss: p%d offsets %d.. were deleted before they were read, and no data-loss event says so", part, lost[0])
			}
		}
		for _, b := range acked {
			for _, rg := range b.Ranges {
				if rg.Partition.Partition != part {
					continue
				}
				d := byKey[cutKey(b)]
				var run *runRec
				at := b.Time
				if d != nil {
					run, at = r.runs[d.run], d.at
				}
				first := d != nil && d.run != lastRun
				if d != nil {
					lastRun = d.run
				}
				step(rg.From, rg.Jump, run, first, at, fmt.Sprintf("batch %d", b.ID))
				cursor = rg.Until
			}
		}
		// The final run read up to the high watermark it had at start.
		for _, st := range r.drainR.started.Starts {
			if st.Partition.Partition != part {
				continue
			}
			if lastRun != r.drainR.idx {
				step(st.NextOffset, "(no batch: the final run's start)", r.drainR, true, r.drainR.startAt, "the final run's start")
				cursor = st.NextOffset
			}
			// A seek kept for a batch the final run re-delivered moves the
			// position past that batch (the stored position says so, and
			// checkPositions holds it to the model): what lies between is
			// the person's choice.
			if next, ok := stored[st.Partition]; ok && next > cursor && userMoved[part][next] {
				cursor = next
			}
			for o := cursor; o < st.HighWatermark; o++ {
				rc := r.c.rec(part, o)
				if rc == nil || rc.Aborted {
					continue
				}
				if del := r.c.deletedAt(part, o); !del.IsZero() {
					if !dataLoss(part, o) {
						r.violate("silent loss: p%d offset %d was deleted before it was read, and no data-loss event says so", part, o)
					}
					continue
				}
				r.violate("never delivered: p%d@%d (the final run with --until-end ended at %d; its high watermark at start was %d)", part, o, cursor, st.HighWatermark)
				break
			}
		}
	}
}
