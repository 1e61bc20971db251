package tui

import (
	"fmt"
	"time"
)

// holdIdle is how long the screen keeps a batch the user chose (moved the
// selection off the newest, or reads the records pane) without a key
// press: after it, the next batch is selected again as it comes.
const holdIdle = time.Minute

// followBatches decides, when batches arrive, whether the selection moves
// to the newest: yes, unless the user held a batch (or reads the records
// pane or a detail) and pressed a key within holdIdle. An expired hold
// ends, and the batches pane's title stops saying "holding".
func (m *Model) followBatches() bool {
	if m.now().Sub(m.lastKey) >= holdIdle {
		m.batches.holding = false
		return true
	}
	_, reading := m.top().(*textView)
	if _, rec := m.top().(*recordView); rec {
		reading = true
	}
	return m.focus != focusRecords && !reading && !m.batches.holding
}

// heldBatch is the batch the records pane shows when it is not the newest
// (the header then says HELD, not LIVE).
func (m *Model) heldBatch() (uint64, bool) {
	if m.hist.len() == 0 || m.batches.cur.sel == 0 {
		return 0, false
	}
	e := m.batches.selected()
	if e == nil {
		return 0, false
	}
	return e.ID, true
}

// liveBadge is the header's state badge of a running stream: LIVE, or
// HELD when the screen shows an older batch than the newest.
func (m *Model) liveBadge() string {
	t := &m.c.theme
	if id, held := m.heldBatch(); held {
		return t.badgePaused.Render(fmt.Sprintf("HELD batch %d (g: live)", id))
	}
	return t.badgeLive.Render("LIVE")
}
