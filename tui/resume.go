package tui

import (
	"fmt"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// Resume is what the store held for the stream before this run: the
// screen says it resumed, and shows the last batches of the batch log
// (their ranges; samples are not stored).
type Resume struct {
	// LastBatch is the last acked batch, AckedAt when it was acked (zero
	// when the log no longer holds it).
	LastBatch uint64
	AckedAt   time.Time
	// Batches are the last batches of the log, newest first, a planned
	// one (to re-deliver) included.
	Batches []offsets.Batch
}

// CodeResumed is the events pane's code for the resume notice.
const CodeResumed = "resumed"

// resumed shows the stored stream this run resumes: a notice in the status
// line and the events pane, and the batch log's last batches.
func (m *Model) resumed(r *Resume) {
	if r == nil || r.LastBatch == 0 {
		return
	}
	for i := len(r.Batches) - 1; i >= 0; i-- {
		e := m.hist.add(&consumer.Batch{Batch: r.Batches[i]})
		e.logged = true
	}
	if m.hist.len() > 0 {
		m.batches.added(true)
		m.records.show(m.batches.selected())
	}
	store := m.stream.store
	if store == "" {
		store = "the store"
	}
	text := fmt.Sprintf("resumed stream %s from %s after batch %d", m.stream.name, store, r.LastBatch)
	if !r.AckedAt.IsZero() {
		text += " (acked " + r.AckedAt.In(m.c.loc).Format("2006-01-02 15:04:05") + ")"
	}
	e := offsets.NewEvent(m.now(), CodeResumed, offsets.Partition{}, text)
	m.events.add(e)
	m.setStatus(krecord.String(text), m.c.theme.info)
}
