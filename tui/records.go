package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// recordsPane shows the sample records of the batch selected in the
// batches pane.
type recordsPane struct {
	*common
	list  *recordList
	batch *batchEntry
}

func newRecordsPane(c *common) *recordsPane {
	p := &recordsPane{common: c, list: newRecordList(c)}
	p.list.empty = "no batch yet: the batches pane says why"
	return p
}

// show switches to batch e's samples; showing the same batch again keeps
// the selection.
func (p *recordsPane) show(e *batchEntry) {
	if e == p.batch && (e == nil || len(e.samples) == len(p.list.all)) {
		return
	}
	p.batch = e
	if e == nil {
		p.list.empty = "no batch yet: the batches pane says why"
		p.list.set(nil, false)
		return
	}
	p.list.empty = "no sample records in this batch"
	if e.logged {
		p.list.empty = "a batch of an earlier run: the store keeps its ranges, not its records (b reads them from the broker)"
	}
	if e.samplesDropped {
		p.list.empty = "samples dropped to bound memory; newer batches keep theirs; r replays the batch"
	}
	p.list.set(e.samples, false)
}

func (p *recordsPane) title() string {
	if p.batch == nil {
		return "Records"
	}
	s := fmt.Sprintf("Records · batch %d · %s", p.batch.ID, sampleCount(p.batch))
	if p.batch.logged {
		s = fmt.Sprintf("Records · batch %d · earlier run, records not kept", p.batch.ID)
	}
	if p.batch.samplesDropped {
		s += " (dropped to bound memory)"
	}
	if f := p.list.filterStatus(); f != "" {
		s += " · " + f
	}
	if ms := p.list.modeStatus(); ms != "" {
		s += " · " + ms
	}
	s += " · b all records"
	return s
}

func (p *recordsPane) SetSize(w, h int)           { p.list.SetSize(w, h) }
func (p *recordsPane) Update(msg tea.Msg) tea.Cmd { return p.list.Update(msg) }
func (p *recordsPane) View() string               { return p.list.View() }
func (p *recordsPane) setFocus(f bool)            { p.list.focused = f }
func (p *recordsPane) ShortHelp() []key.Binding {
	if p.list.capturing() {
		return p.list.ShortHelp()
	}
	// / searches every batch's samples (search view), not this list.
	// The record's partition and batch: seek, replay, Spark options.
	return []key.Binding{p.keys.Enter, p.keys.AllRecords, withHelp(p.keys.Filter, "search"), p.keys.Copy, p.keys.Wrap, p.keys.Seek, p.keys.Replay, p.keys.SparkExport}
}
func (p *recordsPane) FullHelp() [][]key.Binding { return p.list.FullHelp() }
