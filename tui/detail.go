package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// Limits of the record detail: a value of several MiB shows its start.
const (
	detailTextLimit = 32 << 10  // columns of an escaped value shown
	detailKeyLimit  = 4 << 10   // columns of a key or header shown
	detailHexLimit  = 4 << 10   // bytes shown as hex
	prettyJSONLimit = 256 << 10 // larger JSON is shown as it is
)

// jsonText is JSON text (valid: from the schema decoder, or a record
// value that parsed as JSON) made safe for the terminal by JSON's own
// escaping (record.SafeJSON) instead of the terminal rule: JSON already
// reads back unambiguously, and the terminal rule would double its
// backslashes (\u001b would show as \\u001b). Work is bounded by limit
// columns (limit <= 0: none): at most 4·limit bytes are taken, and cut
// reports that some were left out.
func jsonText(b []byte, limit int) (s string, cut bool) {
	if limit > 0 && len(b) > 4*limit {
		b, cut = b[:4*limit], true
	}
	return string(krecord.SafeJSON(b)), cut
}

// textView is a scrollable full-screen text: record detail, batch ranges,
// event detail, full help. Its content is rebuilt on resize so it wraps
// at the new width.
type textView struct {
	*common
	name    string
	build   func(width int) string
	vp      viewport.Model
	rec     *record     // the record shown, for y
	batch   *batchEntry // the batch shown, for r
	extra   []key.Binding
	lastW   int
	focused bool
}

func newTextView(c *common, title string, build func(width int) string) *textView {
	vp := viewport.New()
	return &textView{common: c, name: title, build: build, vp: vp}
}

func (v *textView) SetSize(w, h int) {
	v.vp.SetWidth(w)
	v.vp.SetHeight(h)
	if w != v.lastW {
		// Wrapped once per width, not on every frame.
		v.lastW = w
		v.vp.SetContent(ansi.Hardwrap(v.build(w), w, true))
	}
}

func (v *textView) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch ks := k.String(); {
		case keyIs(ks, v.keys.Top):
			v.vp.GotoTop()
			return nil
		case keyIs(ks, v.keys.Bottom):
			v.vp.GotoBottom()
			return nil
		}
	}
	var cmd tea.Cmd
	v.vp, cmd = v.vp.Update(msg)
	return cmd
}

func (v *textView) View() string { return v.vp.View() }

func (v *textView) ShortHelp() []key.Binding {
	return append([]key.Binding{v.keys.Back, v.keys.Down, v.keys.Up}, v.extra...)
}

func (v *textView) FullHelp() [][]key.Binding {
	return [][]key.Binding{{v.keys.Up, v.keys.Down, v.keys.Top, v.keys.Bottom, v.keys.PageUp, v.keys.PageDown}, append([]key.Binding{v.keys.Back}, v.extra...)}
}

// recordDetail renders a record in full for a view w columns wide: key,
// value (pretty-printed when JSON, hex when binary), headers and sizes,
// every byte escaped. Long lines wrap with their indent kept.
func recordDetail(t *theme, r *record, loc *time.Location, w int) string {
	return recordDetailAs(t, r, loc, w, nil, showDecoded)
}

// recordDetailAs is recordDetail with the key and value decoded by d (nil:
// none) and shown in mode (recordview.go).
func recordDetailAs(t *theme, r *record, loc *time.Location, w int, d *decoding, mode detailMode) string {
	var sb strings.Builder
	label := func(s string) string { return t.bold.Render(fmt.Sprintf("%-10s", s)) }
	fmt.Fprintf(&sb, "%s %s · offset %d", label("record"), krecord.String(r.Partition.String()), r.Offset)
	if r.Batch > 0 {
		fmt.Fprintf(&sb, " · batch %d", r.Batch)
	}
	fmt.Fprintf(&sb, "\n%s %s\n", label("timestamp"), timestampText(r, loc))
	if r.Aborted {
		fmt.Fprintf(&sb, "%s %s\n", label("txn"), t.warn.Render("aborted transaction: its producer aborted it; a read_committed consumer never sees this record"))
	}
	writeRecordField(&sb, t, label("key"), r, true, detailKeyLimit, w, d, mode)
	writeRecordField(&sb, t, label("value"), r, false, detailTextLimit, w, d, mode)
	hbytes := 0
	for _, h := range r.Headers {
		hbytes += len(h.Key) + max(0, h.Value.Size)
	}
	fmt.Fprintf(&sb, "\n%s %d", label("headers"), len(r.Headers))
	if len(r.Headers) > 0 {
		sb.WriteString(" · " + formatBytes(int64(hbytes)))
	}
	sb.WriteString("\n")
	for _, h := range r.Headers {
		v := "(null)"
		if !h.Value.null() {
			v = krecord.EscapeLine(h.Value.Data, detailKeyLimit)
		}
		sb.WriteString(indent(krecord.EscapeLine(h.Key, detailKeyLimit)+" = "+v, w) + "\n")
	}
	return strings.TrimRight(sb.String(), "\n")
}

// indent wraps text to w columns with every line indented by two spaces.
func indent(text string, w int) string {
	if w > 4 {
		text = ansi.Wrap(text, w-2, "")
	}
	return "  " + strings.ReplaceAll(text, "\n", "\n  ")
}

func writeField(sb *strings.Builder, t *theme, label string, f field, limit, w int) {
	if f.null() {
		sb.WriteString("\n" + label + " (null)\n")
		return
	}
	body, kind := renderBytes(f.Data, !f.truncated(), limit, w-2)
	writeFieldAs(sb, t, label, f, w, body, kind)
}

// renderBytes shows b as pretty JSON, text or a hex dump, always escaped
// and bounded; kind names the form and says when it was cut.
func renderBytes(b []byte, complete bool, limit, w int) (body, kind string) {
	switch {
	case len(b) == 0:
		return "", "empty"
	case looksBinary(b):
		n := min(len(b), detailHexLimit)
		kind = "binary, hex"
		if n < len(b) {
			kind += fmt.Sprintf(" (first %s)", formatBytes(int64(n)))
		}
		perLine := 16
		if w < 78 {
			perLine = 8
		}
		return hexDump(b[:n], perLine), kind
	case complete && len(b) <= prettyJSONLimit && isJSONDoc(b):
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") == nil {
			s, cut := jsonText(out.Bytes(), limit)
			if cut {
				return s + "…", fmt.Sprintf("JSON, cut after %s", formatBytes(int64(4*limit)))
			}
			return s, "JSON"
		}
	}
	// A final line break shows as \n (or \r\n) rather than as a blank
	// line nobody would notice.
	var end string
	switch {
	case bytes.HasSuffix(b, []byte("\r\n")):
		b, end = b[:len(b)-2], `\r\n`
	case bytes.HasSuffix(b, []byte("\n")):
		b, end = b[:len(b)-1], `\n`
	}
	s := krecord.EscapeText(b, limit)
	if ansi.StringWidth(s) >= limit {
		s += "…"
		kind = fmt.Sprintf("text, cut after %d columns", limit)
	} else {
		s += end
	}
	return s, kind
}

// looksBinary reports bytes that are not UTF-8 text: invalid UTF-8 or
// many control characters in the first KiB.
func looksBinary(b []byte) bool {
	head := b[:min(len(b), 1024)]
	if len(head) < len(b) {
		// Do not count a rune cut by the 1 KiB boundary as invalid.
		for i := len(head) - 1; i >= max(0, len(head)-utf8.UTFMax); i-- {
			if utf8.RuneStart(head[i]) {
				if !utf8.FullRune(head[i:]) {
					head = head[:i]
				}
				break
			}
		}
	}
	if !utf8.Valid(head) {
		return true
	}
	ctl := 0
	for _, c := range head {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' || c == 0x7f {
			ctl++
		}
	}
	return ctl*10 > len(head)
}

// isJSONDoc reports a JSON object or array, which is worth indenting.
func isJSONDoc(b []byte) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t)
}

// hexDump renders b like hexdump -C, perLine bytes a line (16, or 8 on
// narrow screens); the ASCII column shows printable ASCII only.
func hexDump(b []byte, perLine int) string {
	var sb strings.Builder
	for off := 0; off < len(b); off += perLine {
		line := b[off:min(off+perLine, len(b))]
		fmt.Fprintf(&sb, "%08x  ", off)
		for i := 0; i < perLine; i++ {
			if i < len(line) {
				fmt.Fprintf(&sb, "%02x ", line[i])
			} else {
				sb.WriteString("   ")
			}
			if i == 7 && perLine > 8 {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(" |")
		for _, c := range line {
			if c >= 0x20 && c < 0x7f {
				sb.WriteByte(c)
			} else {
				sb.WriteByte('.')
			}
		}
		sb.WriteString("|\n")
	}
	return strings.TrimRight(sb.String(), "\n")
}

func (v *textView) capturing() bool { return false }

// batchDetail lists every range of a batch and its samples, one line each
// within width.
func batchDetail(m *Model, e *batchEntry, width int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "batch %d · %s · %s · %s · %s · took %s\n", e.ID, e.State,
		e.Time.In(m.c.loc).Format("2006-01-02 15:04:05.000 MST"), plural(e.Records, "record", "records"), formatBytes(e.Bytes), formatDuration(e.Duration))
	if note := batchNote(e); note != "" {
		sb.WriteString(m.c.theme.warn.Render(note) + "\n")
	}
	fmt.Fprintf(&sb, "\n%s [from, until):\n", plural(int64(len(e.Ranges)), "range", "ranges"))
	for _, r := range e.Ranges {
		sb.WriteString(m.batches.rangeLine(r) + "\n")
	}
	fmt.Fprintf(&sb, "\n%s", sampleCount(e))
	if e.samplesDropped {
		sb.WriteString("; dropped to bound memory")
	}
	sb.WriteString(":\n")
	if ids := m.c.schemas.schemaIDs(e.samples); ids != "" {
		sb.WriteString("schema ids in the samples: " + ids + "\n")
	}
	for _, r := range e.samples {
		key := "null"
		if !r.Key.null() {
			key, _ = m.c.schemas.preview(r, true, 40)
		}
		value := "null"
		if !r.Value.null() {
			value, _ = m.c.schemas.preview(r, false, width)
		}
		line := fmt.Sprintf("%s @ %d  %s  %s  %s", krecord.String(r.Partition.String()), r.Offset,
			r.Timestamp.In(m.c.loc).Format("15:04:05.000"), ansi.Truncate(key, 24, "…"), value)
		sb.WriteString(ansi.Truncate(line, max(10, width-1), "…") + "\n")
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// title is the name, and when the text is longer than the view a mark
// of where it is and which way there is more: "↓ more · lines 1-20 of 45".
func (v *textView) title() string {
	total, shown := v.vp.TotalLineCount(), v.vp.VisibleLineCount()
	if total <= shown || shown == 0 {
		return v.name
	}
	var mark string
	switch {
	case v.vp.AtTop():
		mark = "↓ more"
	case v.vp.AtBottom():
		mark = "↑ more"
	default:
		mark = "↑↓ more"
	}
	from := v.vp.YOffset() + 1
	return fmt.Sprintf("%s · %s · lines %d-%d of %d", v.name, mark, from, from+shown-1, total)
}

// timestampText is a record's time and its type: "2026-12-04 10:00:00.123
// UTC · CreateTime" (the producer's), or LogAppendTime (the broker's); a
// record of message format v0 has none.
func timestampText(r *record, loc *time.Location) string {
	if r.Timestamp.IsZero() {
		return "none (message format v0)"
	}
	kind := "CreateTime"
	if r.LogAppendTime {
		kind = "LogAppendTime"
	}
	return r.Timestamp.In(loc).Format("2006-01-02 15:04:05.000 MST") + " · " + kind
}
