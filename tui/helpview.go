package tui

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// tailKeep is the tail ring's size for the help.
func tailKeep(m *Model) string {
	if m.opts.Tail == nil {
		return "not available in this session"
	}
	return "keeps the last " + strconv.Itoa(m.opts.Tail.max) + " records, at most 32 MiB"
}

// helpView is ? : every key with what it does, and what the panes show.
type helpView struct{ *textView }

// helpEntry is one line of the help: keys and what they do.
type helpEntry struct{ keys, desc string }

func newHelpView(m *Model) *helpView {
	t := &m.c.theme
	manual, replay := "", ""
	if !m.opts.ManualAck {
		manual = " (needs --ack manual; this session acks by itself)"
	}
	if m.opts.Replayer == nil {
		replay = " (not available in this session)"
	}
	sections := []struct {
		title   string
		entries []helpEntry
	}{
		{"Move and look", []helpEntry{
			{"tab shift+tab", "next, previous pane; 1-4 jump to a pane"},
			{"j k ↑ ↓", "move the selection"},
			{"g G home end", "first, last; g in the batches pane follows new batches again"},
			{"pgup pgdown", "page up, down; ctrl+u and ctrl+d too"},
			{"enter", "open: every record of a batch, or of a partition from its log start to its high watermark (read from the " +
				"broker a page at a time as you scroll; g, G first and last offset); a record in full (key, pretty JSON value, " +
				"headers, sizes); an event"},
			{"b", "every record of the selected batch, from the records pane (which holds samples)"},
			{"i", "in a batch's records: the batch's details (ranges, samples)"},
			{"esc", "back; clears a filter; stops a search on the broker"},
			{"/", "search every record the screen keeps (the samples of every batch, the tail view's records) by a key or value " +
				"substring, any case, or by an expression when the query starts with ? (below); in the partitions pane: filter partitions by name, state (live paused error loss) or lag>N, lag<N, lag=N; " +
				"in the replay and tail views: filter their records"},
			{"/?EXPR", "a CEL expression over the decoded record: key, value (fields of Avro, Protobuf, JSON Schema or JSON), headers, " +
				"headers_list, topic, partition, offset, timestamp, size; e.g. " +
				`?value.amount > 90.0 && value.country == "FR" && value.type == "refund", ` +
				`?headers.source == "web" && timestamp > timestamp("2026-11-29T10:00:00Z"); ` +
				"a record it fails on (a missing field) does not match (docs/filters.md)"},
			{"y", "copy the selected record's value, decoded when the detail shows it so (OSC 52, works over SSH)"},
			{"v", "in a record's detail: decoded (Avro, Protobuf, JSON Schema) → raw text → hex dump"},
			{"?", "this help"},
			{"q ctrl+c", "quit: the stream closes cleanly, nothing is left half-written"},
		}},
		{"Drive the stream", []helpEntry{
			{"space", "pause or resume every partition (header: PAUSED)"},
			{"P", "pause or resume the selected partition (STATE: paused)"},
			{"s", "seek the selected partition: an offset, earliest, latest, -N (before the high watermark) or @TIME"},
			{"S", "seek every partition of the stream at once, as -o: a target for all, TOPIC=TARGET for one topic, TOPIC:P=TARGET for one; " +
				"a seek lands between the log start and the high watermark (outside: the nearest end, said in the status line)"},
			{"r", "replay the selected batch's ranges, or the selected partition's last 100 records" + replay},
			{"w", "in the replay view: write the records to a file as JSON lines"},
			{"e", "the selected batch as Spark startingOffsets/endingOffsets options, copied with OSC 52"},
			{"a", "ack the batch that waits for its ack" + manual},
			{"n", "cut the next batch now; while a batch waits for its ack, as soon as a acks it (one batch waits at a time)" + manual},
			{"x", "dismiss the data-loss warning (header: DATA LOSS, STATE: data loss); the events pane keeps the events"},
		}},
		{"Find and read records", []helpEntry{
			{"t", "tail: every record as it is read, before it is in a batch, newest at the bottom; space pauses the view " +
				"(not the stream), G follows again; " + tailKeep(m)},
			{"f", "in the search: read ranges on the broker (prefilled with what the batches on screen cover) and add the " +
				"records that match the substring or ?expression to the list; esc stops it" + replay},
			{"] [", "next, previous match: in the search, and in a record's detail opened from it"},
			{"z", "wrap values over several lines (at most 8 a record; enter shows it whole)"},
			{"h l ← →", "scroll the VALUE column sideways"},
			{"V", "show the VALUE column alone, across the whole width"},
		}},
		{"What the panes show", []helpEntry{
			{"Partitions", "SOURCE: why it started where it did (explicit, stored, import, reset-earliest, reset-latest, " +
				"timestamp, new-partition; explicit also after a seek); NEXT: the next offset to read; LOG START and HWM: the offsets the " +
				"partition holds; LAG: HWM - NEXT (with --ack manual: HWM - the acked position, and AHEAD the records read past it); REC/S and TREND: the rate, one mark a second, " +
				"a full block at the line's 90th percentile or above; STATE: live, paused, error (the broker fails; kbatch retries), " +
				"or data loss (retention deleted offsets before they were read; reading went on at the log start) until x."},
			{"Batches", "id, time, records, bytes, processing time, partitions, state: planned (written ahead), " +
				"acked (stored positions moved to its untils), redelivered (planned before a restart, read again; " +
				"redeliv. while it still waits for its ack). " +
				"* marks a batch whose range jumped (seek, reset, data loss). Beneath: the selected batch's " +
				"ranges [from, until)."},
			{"Records", "sample records of the selected batch (enter on the batch, or b, lists all of them). Bytes that could drive the terminal show escaped " +
				"(\\x1b, \\u202e); binary values as \\xNN, and as hex in the detail. With a schema registry or a " +
				"local schema, keys and values with a schema show decoded as compact JSON (\"decoding…\" while the " +
				"schema is fetched), and / matches the decoded text."},
			{"Events", "seeks, resets, data loss, out-of-range offsets, new partitions, broker errors; " +
				"the latest also shows in the status line."},
		}},
		{"Write, sort, switch, more", []helpEntry{
			{"p", "produce a record: topic, partition (empty: by key, murmur2 as the Java client), key, value or a value file, " +
				"headers; enter shows where it goes (cluster, topic), y writes it, the status line says partition and offset"},
			{"E", "edit the selected record (records pane, detail, replay) and produce it again, confirmed the same way"},
			{"o", "sort the partitions by lag, rate or name (the pane title says which)"},
			{":", "command palette: every action by name, fuzzy matched; enter runs it"},
			{"c", "switch to another [clusters.NAME] profile: the stream closes cleanly, then the topic picker opens"},
			{"C", "consumer groups that committed on these topics: offsets, lag, where they stand against this stream " +
				"and its batches; read-only, refreshed every 5s"},
			{"O", "set a consumer group at the selected batch's start or end (tab) or at the selected partition's " +
				"acked offset: enter shows the plan (committed, new, difference), a second enter writes it; " +
				"a group with live members is never moved, and kbatch never joins it"},
			{"mouse", "click focuses a pane and selects a row (or a tab); the wheel scrolls"},
		}},
	}
	build := func(width int) string {
		const keyW = 15
		var sb strings.Builder
		for i, sec := range sections {
			if i > 0 {
				sb.WriteString("\n")
			}
			sb.WriteString(t.titleFocused.Render(sec.title) + "\n")
			for _, e := range sec.entries {
				desc := ansi.Wordwrap(e.desc, max(20, width-keyW-2), "")
				desc = strings.ReplaceAll(desc, "\n", "\n"+strings.Repeat(" ", keyW+2))
				sb.WriteString("  " + t.bold.Render(fit(e.keys, keyW)) + desc + "\n")
			}
		}
		return strings.TrimRight(sb.String(), "\n")
	}
	return &helpView{newTextView(m.c, "Help · every key", build)}
}

func (h *helpView) capturing() bool            { return false }
func (h *helpView) Update(msg tea.Msg) tea.Cmd { return h.textView.Update(msg) }
