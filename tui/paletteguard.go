package tui

// cannotRun says why the action of the key map's field cannot run on the
// screen under the palette, or "" when it can. The palette greys such an
// action and shows the reason; choosing it shows the reason in the status
// line instead of pressing a key that would do nothing.
func (m *Model) cannotRun(field string) string {
	top := m.top()
	_, inReplay := top.(*replayView)
	_, inRecord := top.(*recordView)
	_, inFind := top.(*findView)
	rv, inRecords := top.(*recordsView)
	batch := m.batches.selected()
	if b := m.batchOnTop(); b != nil {
		batch = b
	}
	switch field {
	case "Ack", "Step":
		if !m.opts.ManualAck {
			return "needs --ack manual (batches then wait for a)"
		}
		if field == "Ack" && !m.stream.waiting {
			return "no batch waits for its ack"
		}
	case "PauseAll", "PausePart", "Seek", "SeekAll":
		if m.controls == nil {
			return "this view is read-only: the batches are Spark's"
		}
		if top != nil && field != "PauseAll" {
			return "on the main screen (esc closes this view)"
		}
	case "Replay":
		if m.opts.Replayer == nil {
			return "needs brokers to read from: not available here"
		}
	case "Write":
		if !inReplay {
			return "in the replay view (r opens one)"
		}
	case "Decoded":
		if !inRecord {
			return "in a record's detail (enter on a record)"
		}
	case "NextMatch", "PrevMatch":
		if !inFind && !(inRecord && m.findView != nil) {
			return "in the search (/) and a match's detail"
		}
	case "BrokerSearch":
		if !inFind {
			return "in the search (/): searches its text on the broker"
		}
	case "Dismiss":
		if !m.stream.loss.active() {
			return "no data-loss warning to dismiss"
		}
	case "Copy":
		if m.selectedRecord() == nil {
			return "select a record first"
		}
	case "Edit":
		if m.opts.Writer == nil {
			return "writing records is not available here"
		}
		if m.selectedRecord() == nil && top != nil {
			return "select a record first"
		}
	case "Produce":
		if m.opts.Writer == nil {
			return "writing records is not available here"
		}
	case "Groups":
		if m.opts.Groups == nil {
			return "consumer groups are not available here"
		}
	case "Cluster":
		if len(m.opts.Profiles) < 2 {
			return "the config has no other [clusters.NAME] profile"
		}
	case "Tail":
		if m.opts.Tail == nil {
			return "the tail is not available here"
		}
	case "Info":
		if !inRecords || rv.batch == nil {
			return "in a batch's records (enter on a batch)"
		}
	case "AllRecords":
		switch {
		case m.opts.Replayer == nil:
			return "needs brokers to read from: not available here"
		case batch == nil:
			return "no batch yet"
		case top != nil:
			return "on the main screen: enter on a batch does the same"
		}
	case "SparkExport":
		if batch == nil {
			return "no batch yet"
		}
	}
	return ""
}
