package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	krecord "github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/schema"
)

// detailMode is how the record detail shows the key and value; v cycles
// through them.
type detailMode int

const (
	// showDecoded: the decoded JSON, pretty-printed, for what has a
	// schema; everything else as it always shows (pretty JSON, text, or
	// hex when binary).
	showDecoded detailMode = iota
	// showRaw: the bytes as escaped text, whatever they are.
	showRaw
	// showHex: a hex dump of the bytes.
	showHex
	detailModes
)

// recordView is the record detail: a textView whose key and value show
// decoded, raw or as hex (v).
type recordView struct {
	*textView
	mode detailMode
}

func (m *Model) newRecordView(r *record) *recordView {
	rv := &recordView{}
	rv.textView = newTextView(m.c, fmt.Sprintf("Record %s @ %d", krecord.String(r.Partition.String()), r.Offset),
		func(w int) string { return recordDetailAs(&m.c.theme, r, m.c.loc, w, m.c.schemas, rv.mode) })
	rv.rec = r
	rv.extra = append(rv.extra, m.c.keys.Copy, m.c.keys.Decoded)
	return rv
}

func (v *recordView) Update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok && keyIs(k.String(), v.keys.Decoded) {
		v.mode = (v.mode + 1) % detailModes
		v.rebuild()
		return nil
	}
	return v.textView.Update(msg)
}

func (v *recordView) title() string {
	switch v.mode {
	case showRaw:
		return v.name + " · raw text"
	case showHex:
		return v.name + " · hex"
	}
	if v.schemas.result(v.rec, false, true).Status == schema.Decoded || v.schemas.result(v.rec, true, true).Status == schema.Decoded {
		return v.name + " · decoded"
	}
	return v.name
}

func (v *recordView) ShortHelp() []key.Binding {
	b := v.textView.ShortHelp()
	for i := range b {
		if keyIs("v", b[i]) {
			b[i] = withHelp(b[i], "show "+((v.mode+1)%detailModes).String())
		}
	}
	return b
}

func (m detailMode) String() string {
	switch m {
	case showRaw:
		return "raw"
	case showHex:
		return "hex"
	}
	return "decoded"
}

// rebuild renders the content again at the same width (a schema arrived,
// the mode changed), keeping the scroll position where it can.
func (v *textView) rebuild() {
	if v.lastW <= 0 {
		return
	}
	y := v.vp.YOffset()
	v.vp.SetContent(ansi.Hardwrap(v.build(v.lastW), v.lastW, true))
	v.vp.SetYOffset(y)
}

// writeRecordField writes r's key (isKey) or value for the record detail
// in mode: decoded (with its format, schema id, subject and version, or
// the one-line reason it did not decode), raw escaped text, or hex.
func writeRecordField(sb *strings.Builder, t *theme, label string, r *record, isKey bool, limit, w int, d *decoding, mode detailMode) {
	f := r.Value
	if isKey {
		f = r.Key
	}
	if f.null() || mode == showDecoded && d == nil {
		writeField(sb, t, label, f, limit, w)
		return
	}
	switch mode {
	case showRaw:
		body, kind := "", "empty"
		if len(f.Data) > 0 {
			body, kind = krecord.EscapeText(f.Data, limit), "raw text"
			if ansi.StringWidth(body) >= limit {
				body += "…"
				kind = fmt.Sprintf("raw text, cut after %d columns", limit)
			}
		}
		writeFieldAs(sb, t, label, f, w, body, kind)
		return
	case showHex:
		n := min(len(f.Data), detailHexLimit)
		kind := "hex"
		if n < len(f.Data) {
			kind += fmt.Sprintf(" (first %s)", formatBytes(int64(n)))
		}
		perLine := 16
		if w < 80 {
			perLine = 8
		}
		body := ""
		if n > 0 {
			body = hexDump(f.Data[:n], perLine)
		}
		writeFieldAs(sb, t, label, f, w, body, kind)
		return
	}
	res := d.result(r, isKey, false)
	switch res.Status {
	case schema.Decoded:
		writeFieldAs(sb, t, label, f, w, prettyDecoded(res.JSON, limit), describeDecoded(res))
		if res.Reason != "" {
			sb.WriteString(indent(t.warn.Render(krecord.String(res.Reason)), w) + "\n")
		}
	case schema.Pending:
		writeField(sb, t, label, f, limit, w)
		sb.WriteString(indent(t.dim.Render(fmt.Sprintf("decoding… fetching schema id %d from the registry", res.SchemaID)), w) + "\n")
	case schema.Failed:
		writeField(sb, t, label, f, limit, w)
		sb.WriteString(indent(t.warn.Render("not decoded: "+krecord.String(res.Reason)), w) + "\n")
	default:
		writeField(sb, t, label, f, limit, w)
	}
}

// writeFieldAs is writeField with the body and its kind given.
func writeFieldAs(sb *strings.Builder, t *theme, label string, f field, w int, body, kind string) {
	sb.WriteString("\n" + label + " " + formatBytes(int64(f.Size)))
	if kind != "" {
		sb.WriteString(" · " + kind)
	}
	if f.truncated() {
		sb.WriteString(t.warn.Render(fmt.Sprintf(" · only the first %s are kept in memory", formatBytes(int64(len(f.Data))))))
	}
	sb.WriteString("\n")
	if body != "" {
		sb.WriteString(indent(body, w) + "\n")
	}
}

// describeDecoded is "Avro · schema id 3 · orders-value v1", or
// "Protobuf · local shop.proto".
func describeDecoded(res schema.Result) string {
	s := "decoded"
	switch res.Format {
	case schema.Avro:
		s = "Avro"
	case schema.Protobuf:
		s = "Protobuf"
	case schema.JSON:
		s = "JSON Schema"
	}
	if res.SchemaID != 0 {
		s += fmt.Sprintf(" · schema id %d", res.SchemaID)
	}
	if res.Subject != "" {
		s += " · " + krecord.String(res.Subject)
		if res.Version > 0 {
			s += fmt.Sprintf(" v%d", res.Version)
		}
	}
	if res.Local != "" {
		s += " · local " + krecord.String(res.Local)
	}
	return s
}

// prettyDecoded indents decoded JSON (compact and valid, with control
// characters escaped by the decoder) and makes it safe for the terminal
// by JSON's own escaping (jsonText), bounded by limit columns.
func prettyDecoded(text string, limit int) string {
	b := []byte(text)
	if len(b) <= prettyJSONLimit {
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") == nil {
			b = out.Bytes()
		}
	}
	s, cut := jsonText(b, limit)
	if cut {
		s += "…"
	}
	return s
}
