package tui

import (
	"fmt"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// apply folds a burst of stream events into the model. Only the state
// changes here; drawing happens once per burst in View.
func (m *Model) apply(evs []consumer.Event) {
	rows := len(m.parts.rows)
	batchAdded := false
	for _, ev := range evs {
		switch e := ev.(type) {
		case *consumer.Started:
			m.started(e)
		case *consumer.BatchEvent:
			m.opts.SampleGate.took(e.Batch)
			m.batch(e.Batch)
			batchAdded = true
		case *consumer.Notice:
			m.notice(e.Event)
		case *consumer.Progress:
			m.progress(e)
		case *consumer.Ended:
			m.ended(e)
		}
	}
	if batchAdded {
		// Follow new batches unless the user holds one (hold.go).
		m.batches.added(m.followBatches())
		m.records.show(m.batches.selected())
		m.followHeap()
	}
	if len(m.parts.rows) != rows || m.parts.pf.query != "" || (m.wide() && m.batches.naturalWidth() != m.laidOutBatchesW) {
		// The wide layout fits the partitions pane to its rows (a filter
		// shows more or fewer as lags change) and the batches pane to its
		// table.
		m.layout()
	}
}

func (m *Model) started(e *consumer.Started) {
	s := &m.stream
	if !s.startedReceived {
		s.startedAt = m.now()
	}
	s.startedReceived = true
	if e.Stream != "" {
		s.name = e.Stream
	}
	if len(e.Brokers) > 0 {
		s.brokers = e.Brokers
	}
	if len(e.Topics) > 0 {
		s.topics = e.Topics
	}
	m.records.list.topics = len(s.topics) > 1
	m.c.multiTopic = len(s.topics) > 1
	if e.Redelivering != nil {
		s.redeliveringID = e.Redelivering.ID
	}
	m.parts.start(e.Starts)
	if !m.resumeShown {
		m.resumeShown = true
		m.resumed(m.opts.Resume)
	}
}

func (m *Model) batch(b *consumer.Batch) {
	m.hist.add(b)
	m.parts.advance(b)
	s := &m.stream
	switch {
	case b.State == offsets.StatePlanned && m.opts.ManualAck:
		s.waiting, s.waitingID = true, b.ID
		m.setStatus(fmt.Sprintf("batch %d (%s) waits for its ack: a acks it", b.ID, plural(b.Records, "record", "records")), m.c.theme.info)
	case b.State == offsets.StateAcked:
		s.batches++
		s.records += b.Records
		if s.waitingID == b.ID {
			s.waiting, s.waitingID = false, 0
		}
	}
}

func (m *Model) notice(e offsets.Event) {
	m.events.add(e)
	if e.Code == offsets.CodeSeek && m.now().Before(m.seekSummaryUntil) {
		return // S's summary stays; the events pane has each seek
	}
	m.setStatus(e.Code+": "+krecord.String(e.Message), eventStyle(&m.c.theme, e.Code))
	if e.Code == offsets.CodeDataLoss {
		m.stream.loss.add(e)
		m.parts.setLoss(m.stream.loss.partitions)
	}
}

// dismissLoss is x: the person saw the data-loss warning; the header and
// the partitions pane stop showing it (the events pane keeps the events).
func (m *Model) dismissLoss() {
	if !m.stream.loss.active() {
		m.setStatus("x dismisses a data-loss warning; there is none", m.c.theme.dim)
		return
	}
	m.stream.loss = lossWarning{}
	m.parts.setLoss(nil)
	m.setStatus("data-loss warning dismissed; the events pane keeps the events", m.c.theme.dim)
}

func (m *Model) progress(p *consumer.Progress) {
	s := &m.stream
	s.rate, s.byteRate, s.paused = p.Rate, p.ByteRate, p.Paused
	s.lastProgressTime = p.Time
	if !p.Waiting && s.waiting {
		s.waiting = false
	}
	m.parts.progress(p)
}

func (m *Model) ended(e *consumer.Ended) {
	m.stream.ended = e
	text := fmt.Sprintf("the stream ended (%s) after %s", e.Reason, plural(int64(e.Batches), "batch", "batches"))
	if e.Err != nil {
		text += ": " + krecord.String(e.Err.Error())
		m.setStatus(text+"; q quits", m.c.theme.bad)
		return
	}
	m.setStatus(text+"; q quits", m.c.theme.warn)
}
