package tui

import (
	"fmt"
	"strconv"

	tea "charm.land/bubbletea/v2"

	krecord "github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/schema"
)

// backHandler is a view or pane that uses esc itself first (to clear a
// filter); it reports whether it did.
type backHandler interface{ back() bool }

// key handles a key press: ctrl+c always quits; a capturing view gets
// everything else; then the global keys; then the view on top or the
// focused pane.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	km := m.c.keys
	if ks == "ctrl+c" {
		return tea.Quit
	}
	if m.tooSmall() {
		if keyIs(ks, km.Quit) {
			return tea.Quit
		}
		return nil
	}
	if v := m.top(); v != nil && v.capturing() {
		if _, form := v.(interface{ submit() tea.Cmd }); form && ks == "esc" {
			m.popView()
			return nil
		}
		return v.Update(k)
	}
	if cmd, ok := m.listKey(ks, k); ok {
		return cmd
	}
	if cmd, ok := m.recordsKey(ks); ok { // batchrecords.go
		return cmd
	}
	if m.top() == nil && m.records.list.capturing() {
		return m.records.Update(k)
	}
	if cmd, ok := m.moreKey(ks); ok { // route_more.go
		return cmd
	}
	switch {
	case keyIs(ks, km.Quit):
		return tea.Quit
	case keyIs(ks, km.Help):
		m.openHelp()
	case keyIs(ks, km.Back):
		m.back()
	case keyIs(ks, km.PauseAll):
		return m.togglePauseAll()
	case keyIs(ks, km.Ack):
		return m.ack()
	case keyIs(ks, km.Step):
		return m.step()
	case ks == "a" || ks == "n":
		m.setStatus(ks+" works with --ack manual: batches then wait for a (ack); n cuts the next batch now", m.c.theme.dim)
	case keyIs(ks, km.Copy):
		return m.copyValue()
	case keyIs(ks, km.Enter):
		return m.enter()
	case ks == "r" && m.batchOnTop() != nil:
		return m.openReplay()
	case keyIs(ks, km.SparkExport) && (m.top() == nil || m.batchOnTop() != nil):
		return m.exportSpark()
	default:
		if v := m.top(); v != nil {
			return v.Update(k)
		}
		return m.mainKey(ks, k)
	}
	return nil
}

// mainKey handles the keys of the main screen (no view on top).
func (m *Model) mainKey(ks string, k tea.KeyPressMsg) tea.Cmd {
	km := m.c.keys
	switch {
	case keyIs(ks, km.Next):
		m.setFocus(m.focus + 1)
	case keyIs(ks, km.Prev):
		m.setFocus(m.focus - 1)
	case len(ks) == 1 && ks >= "1" && ks <= strconv.Itoa(paneCount):
		m.setFocus(int(ks[0] - '1'))
	case keyIs(ks, km.PausePart):
		return m.togglePausePartition()
	case keyIs(ks, km.Dismiss):
		m.dismissLoss()
	case keyIs(ks, km.Seek):
		return m.openSeek()
	case keyIs(ks, km.SeekAll):
		return m.openSeekAll()
	case ks == "r":
		return m.openReplay()
	case keyIs(ks, km.Filter):
		m.setFocus(focusRecords)
		return m.records.Update(k)
	default:
		cmd := m.panes[m.focus].Update(k)
		if m.focus == focusBatches {
			m.records.show(m.batches.selected())
		}
		return cmd
	}
	m.layout()
	return nil
}

// back is esc: it clears a filter, else closes the view on top.
func (m *Model) back() {
	if v := m.top(); v != nil {
		if b, ok := v.(backHandler); ok && b.back() {
			m.layout()
			return
		}
		m.popView()
		return
	}
	if m.focus == focusRecords && m.records.back() {
		m.layout()
	}
}

// back clears the records filter.
func (l *recordList) back() bool {
	if l.query == "" {
		return false
	}
	l.filter.SetValue("")
	l.apply()
	l.layout()
	return true
}

func (p *recordsPane) back() bool { return p.list.back() }
func (v *replayView) back() bool  { return v.list.back() }

// enter opens the details of what is selected: a batch's and a
// partition's records, a record's detail.
func (m *Model) enter() tea.Cmd {
	if v := m.top(); v != nil {
		if v == view(m.replay) {
			if r := m.replay.list.selected(); r != nil {
				m.openRecord(r)
			}
		}
		return nil
	}
	switch m.focus {
	case focusBatches:
		if e := m.batches.selected(); e != nil {
			return m.enterBatch(e)
		}
	case focusRecords:
		if r := m.records.list.selected(); r != nil {
			m.openRecord(r)
		}
	case focusEvents:
		if e, ok := m.events.selected(); ok {
			tv := newTextView(m.c, "Event "+krecord.String(e.Code), func(w int) string { return eventDetail(e, m.c.loc, w) })
			m.pushView(tv)
		}
	case focusPartitions:
		return m.enterPartition()
	}
	return nil
}

func (m *Model) openRecord(r *record) {
	m.pushView(m.newRecordView(r)) // recordview.go
}

func (m *Model) openBatch(e *batchEntry) {
	tv := newTextView(m.c, fmt.Sprintf("Batch %d", e.ID), func(w int) string { return batchDetail(m, e, w) })
	tv.batch = e
	if m.opts.Replayer != nil {
		tv.extra = append(tv.extra, m.c.keys.Replay)
	}
	tv.extra = append(tv.extra, m.c.keys.SparkExport)
	m.pushView(tv)
}

// batchOnTop returns the batch whose detail is on top, if any.
func (m *Model) batchOnTop() *batchEntry {
	switch v := m.top().(type) {
	case *textView:
		return v.batch
	case *recordsView:
		return v.batch
	}
	return nil
}

func (m *Model) openHelp() {
	if _, ok := m.top().(*helpView); ok {
		return
	}
	m.pushView(newHelpView(m))
}

// selectedRecord is the record y copies: the one in the detail view on
// top, the replay view's selection, or the records pane's.
func (m *Model) selectedRecord() *record {
	switch v := m.top().(type) {
	case nil:
		if m.focus == focusRecords {
			return m.records.list.selected()
		}
	case *textView:
		return v.rec
	case *recordView:
		return v.rec
	case *replayView:
		return v.list.selected()
	case *tailView:
		return v.list.selected()
	case *findView:
		return v.list.selected()
	case *recordsView:
		return v.list.selected()
	}
	return nil
}

func (m *Model) copyValue() tea.Cmd {
	r := m.selectedRecord()
	switch {
	case r == nil:
		m.setStatus("select a record to copy its value (records pane)", m.c.theme.dim)
		return nil
	case r.Value.null():
		m.setStatus("the value of this record is null: nothing copied", m.c.theme.warn)
		return nil
	}
	// The record detail showing a decoded value copies that JSON; v to the
	// raw text copies the bytes.
	if rv, ok := m.top().(*recordView); ok && rv.mode == showDecoded {
		if res := m.c.schemas.result(r, false, false); res.Status == schema.Decoded {
			m.setStatus(fmt.Sprintf("copied the decoded JSON of %s @ %d (%s, %s) with OSC 52; v then y copies the raw bytes",
				krecord.String(r.Partition.String()), r.Offset, describeDecoded(res), formatBytes(int64(len(res.JSON)))), m.c.theme.ok)
			return tea.SetClipboard(res.JSON)
		}
	}
	text := fmt.Sprintf("copied the value of %s @ %d (%s) with OSC 52", krecord.String(r.Partition.String()), r.Offset, formatBytes(int64(len(r.Value.Data))))
	if r.Value.truncated() {
		text += fmt.Sprintf("; only its first %s are kept in memory", formatBytes(int64(len(r.Value.Data))))
	}
	m.setStatus(text, m.c.theme.ok)
	return tea.SetClipboard(string(r.Value.Data))
}

// paster is a view with a text field that takes pasted text.
type paster interface{ paste(tea.PasteMsg) tea.Cmd }

// paste hands pasted text (a terminal's bracketed paste) to the text field
// being edited: the form or view on top, the records' search, the
// partitions' filter. A paste is never taken as keys (a pasted "q" must not
// quit), so with no field open it is dropped, and the status line says so.
func (m *Model) paste(p tea.PasteMsg) tea.Cmd {
	if m.tooSmall() {
		return nil
	}
	if v := m.top(); v != nil {
		if pv, ok := v.(paster); ok && v.capturing() {
			return pv.paste(p)
		}
	} else if m.records.list.capturing() {
		return m.records.list.paste(p)
	} else if m.parts.pf.editing {
		return m.parts.pasteFilter(p)
	}
	m.setStatus("pasted text goes into a text field, and none is open", m.c.theme.dim)
	return nil
}
