package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// Writer produces one record for p and E; the kafka package's Writer
// through an adapter in cli. Write is called from a tea.Cmd.
type Writer interface {
	Write(ctx context.Context, r WriteRequest) (WriteResult, error)
}

// ByKey is the WriteRequest partition that lets the key choose: murmur2
// of the key modulo the partition count, as the Java client's default
// partitioner (so the record lands where other producers put that key);
// a random partition when there is no key.
const ByKey int32 = -1

// WriteRequest is one record to produce. Key and Value nil are absent
// (null); empty slices are empty.
type WriteRequest struct {
	Topic      string
	Partition  int32
	Key, Value []byte
	Headers    []krecord.Header
}

// WriteResult is where the record landed.
type WriteResult struct {
	Partition int32
	Offset    int64
}

// maxValueFile bounds the value file p reads into memory.
const maxValueFile = 16 << 20

// maxEditBytes bounds the value E puts in the form's one-line input;
// larger values go through a value file.
const maxEditBytes = 64 << 10

// produce form fields, in order.
const (
	pfTopic = iota
	pfPartition
	pfKey
	pfValue
	pfFile
	pfHeaders
	pfCount
)

var produceLabels = [pfCount]string{"topic", "partition", "key", "value", "value file", "headers"}

// produce form stages.
const (
	stageEdit = iota
	stageConfirm
	stageWriting
	stageDone
)

// produceRequestMsg asks the root to write (the user confirmed).
type produceRequestMsg struct {
	id   int
	req  WriteRequest
	file string
}

// produceDoneMsg is the cluster's answer.
type produceDoneMsg struct {
	id     int
	req    WriteRequest
	result WriteResult
	err    error
}

// produceForm asks for a record (p), or shows a kept record for editing
// (E); enter shows what will be written and where, y writes it. Nothing
// is written without that confirmation.
type produceForm struct {
	*common
	inputs  [pfCount]textinput.Model
	null    [pfCount]bool // key or value is null (ctrl+n)
	focus   int
	stage   int
	cluster string // "cluster NAME (brokers)", for the confirmation
	origin  string // the record E started from, "" for p
	req     WriteRequest
	file    string
	size    int64 // the value file's size
	problem string
	result  string
	pending int
	nextID  *int
	width   int
}

func newProduceForm(c *common, cluster string, nextID *int) *produceForm {
	f := &produceForm{common: c, cluster: cluster, nextID: nextID}
	placeholders := [pfCount]string{
		"topic name",
		"empty: by key (murmur2, as the Java client); no key: any",
		"empty: no key",
		"empty value; ctrl+n: null (a tombstone)",
		"a file whose bytes are the value, instead of the value above",
		"name=value, name=value",
	}
	for i := range f.inputs {
		in := newLineInput(fmt.Sprintf("%-12s", produceLabels[i]), placeholders[i])
		st := in.Styles()
		st.Focused.Prompt = st.Focused.Prompt.Bold(true)
		in.SetStyles(st)
		f.inputs[i] = in
	}
	f.inputs[0].Focus()
	return f
}

// prefill puts r into the form for E.
func (f *produceForm) prefill(r *record) {
	f.origin = fmt.Sprintf("%s @ %d", r.Partition.String(), r.Offset)
	f.inputs[pfTopic].SetValue(r.Topic)
	f.inputs[pfPartition].SetValue(strconv.Itoa(int(r.Partition.Partition)))
	f.null[pfKey] = r.Key.null()
	f.inputs[pfKey].SetValue(quoteField(r.Key.Data, ""))
	f.null[pfValue] = r.Value.null()
	f.inputs[pfValue].SetValue(quoteField(r.Value.Data, ""))
	hs := make([]headerPair, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = headerPair{key: h.Key, value: h.Value.Data}
	}
	f.inputs[pfHeaders].SetValue(formatHeaders(hs))
	for i := range f.inputs {
		f.inputs[i].CursorEnd()
	}
	f.setFocus(pfValue)
}

func (f *produceForm) setFocus(i int) {
	f.inputs[f.focus].Blur()
	f.focus = (i + pfCount) % pfCount
	f.inputs[f.focus].Focus()
}

func (f *produceForm) SetSize(w, h int) {
	f.width = w
	for i := range f.inputs {
		f.inputs[i].SetWidth(max(10, w-15)) // the mark, the label
	}
}

func (f *produceForm) capturing() bool { return true }
func (f *produceForm) dialog() bool    { return true }

func (f *produceForm) title() string {
	if f.origin != "" {
		return "Edit and re-produce " + krecord.String(f.origin)
	}
	return "Produce a record"
}

func (f *produceForm) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case produceDoneMsg:
		if !answered(&f.pending, msg.id) {
			return nil
		}
		if msg.err != nil {
			f.stage, f.problem = stageEdit, msg.err.Error()
			return nil
		}
		f.stage = stageDone
		f.result = fmt.Sprintf("written to %s[%d] at offset %d", msg.req.Topic, msg.result.Partition, msg.result.Offset)
		return nil
	case tea.KeyPressMsg:
		return f.key(msg)
	}
	return nil
}

func (f *produceForm) key(k tea.KeyPressMsg) tea.Cmd {
	ks := k.String()
	switch f.stage {
	case stageWriting:
		if ks == "esc" {
			return closeView // the answer still comes, in the status line
		}
		return nil
	case stageConfirm:
		switch ks {
		case "y":
			*f.nextID++
			f.pending = *f.nextID
			f.stage = stageWriting
			req := produceRequestMsg{id: f.pending, req: f.req, file: f.file}
			return func() tea.Msg { return req }
		case "n", "esc":
			f.stage = stageEdit
		}
		return nil
	case stageDone:
		switch ks {
		case "esc":
			return closeView
		case "enter":
			f.stage, f.result = stageEdit, ""
		}
		return nil
	}
	switch ks {
	case "esc":
		return closeView
	case "enter":
		f.review()
	case "tab", "down":
		f.setFocus(f.focus + 1)
	case "shift+tab", "up":
		f.setFocus(f.focus - 1)
	case "ctrl+n":
		if f.focus == pfKey || f.focus == pfValue {
			f.null[f.focus] = !f.null[f.focus]
		}
	default:
		return f.typeIn(k)
	}
	return nil
}

// paste types pasted text into the field with focus while the form is
// edited.
func (f *produceForm) paste(p tea.PasteMsg) tea.Cmd {
	if f.stage != stageEdit {
		return nil
	}
	return f.typeIn(p)
}

// typeIn hands a key or a paste to the field with focus.
func (f *produceForm) typeIn(msg tea.Msg) tea.Cmd {
	if f.null[f.focus] {
		f.null[f.focus] = false // typing ends null
		f.inputs[f.focus].SetValue("")
	}
	cmd := typeInto(&f.inputs[f.focus], msg)
	f.problem = ""
	return cmd
}

// review checks the fields and, when they hold a record, asks for the
// confirmation.
func (f *produceForm) review() {
	req, file, size, err := f.parse()
	if err != nil {
		f.problem = err.Error()
		return
	}
	f.req, f.file, f.size, f.problem = req, file, size, ""
	f.stage = stageConfirm
}

func (f *produceForm) parse() (WriteRequest, string, int64, error) {
	var req WriteRequest
	req.Topic = strings.TrimSpace(f.inputs[pfTopic].Value())
	if req.Topic == "" {
		return req, "", 0, errors.New("type the topic to write to")
	}
	req.Partition = ByKey
	if p := strings.TrimSpace(f.inputs[pfPartition].Value()); p != "" {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 {
			return req, "", 0, fmt.Errorf("partition %q: want a partition number, or nothing to let the key choose", p)
		}
		req.Partition = int32(n)
	}
	var err error
	if !f.null[pfKey] && f.inputs[pfKey].Value() != "" {
		if req.Key, err = unquoteField(f.inputs[pfKey].Value()); err != nil {
			return req, "", 0, fmt.Errorf("key: %v", err)
		}
	}
	file := strings.TrimSpace(f.inputs[pfFile].Value())
	var size int64
	switch {
	case file != "":
		file = expandHome(file)
		fi, err := os.Stat(file)
		switch {
		case err != nil:
			return req, "", 0, fmt.Errorf("value file: %v", cause(err))
		case !fi.Mode().IsRegular():
			return req, "", 0, fmt.Errorf("value file %s is not a regular file", file)
		case fi.Size() > maxValueFile:
			return req, "", 0, fmt.Errorf("value file %s has %s; the form reads at most %s", file, formatBytes(fi.Size()), formatBytes(maxValueFile))
		}
		size = fi.Size()
	case f.null[pfValue]:
	default:
		if req.Value, err = unquoteField(f.inputs[pfValue].Value()); err != nil {
			return req, "", 0, fmt.Errorf("value: %v", err)
		}
	}
	hs, err := parseHeaders(f.inputs[pfHeaders].Value())
	if err != nil {
		return req, "", 0, err
	}
	for _, h := range hs {
		req.Headers = append(req.Headers, krecord.Header{Key: h.key, Value: h.value})
	}
	return req, file, size, nil
}

func (f *produceForm) View() string {
	th := &f.theme
	var lines []string
	switch f.stage {
	case stageEdit:
		lines = append(lines, wrap("Nothing is written until you confirm. Escapes: \\n \\t \\xNN \\uNNNN, \\\\ for a backslash.", f.width), "")
		for i := range f.inputs {
			// The field with the focus is marked, as a list's selection.
			mark := "  "
			if i == f.focus {
				mark = th.info.Render("> ")
			}
			if f.null[i] {
				lines = append(lines, mark+fmt.Sprintf("%-12s", produceLabels[i])+th.warn.Render("null")+th.dim.Render("  (ctrl+n or typing gives it a value)"))
				continue
			}
			lines = append(lines, mark+f.inputs[i].View())
		}
		lines = append(lines, "")
		if f.problem != "" {
			lines = append(lines, th.bad.Render(wrap(krecord.String(f.problem), f.width)))
		} else {
			lines = append(lines, th.dim.Render("tab/↑↓ move · enter reviews · esc cancels"))
		}
	case stageConfirm, stageWriting:
		lines = append(lines, th.warn.Render(wrap("Write this record to topic "+strconv.Quote(f.req.Topic)+" on "+f.cluster+"?", f.width)), "")
		lines = append(lines, f.summary()...)
		lines = append(lines, "")
		if f.stage == stageWriting {
			lines = append(lines, th.info.Render("writing…"))
		} else {
			lines = append(lines, th.bold.Render("y writes it")+th.dim.Render(" · n or esc goes back to the form"))
		}
	case stageDone:
		lines = append(lines, th.ok.Render(krecord.String(f.result)), th.dim.Render("on "+f.cluster), "")
		lines = append(lines, f.summary()...)
		lines = append(lines, "", th.dim.Render("enter writes another · esc closes"))
	}
	return strings.Join(lines, "\n")
}

// summary describes the reviewed record, escaped, one line per part.
func (f *produceForm) summary() []string {
	r := f.req
	part := "by key: murmur2 of the key, as the Java client"
	switch {
	case r.Partition >= 0:
		part = strconv.Itoa(int(r.Partition))
	case r.Key == nil:
		part = "any (no key)"
	}
	show := func(b []byte) string {
		if b == nil {
			return "null"
		}
		return fmt.Sprintf("%s (%s)", krecord.EscapeLine(b, f.width), formatBytes(int64(len(b))))
	}
	value := show(r.Value)
	switch {
	case f.file != "":
		value = fmt.Sprintf("%s from %s", formatBytes(f.size), krecord.String(f.file))
	case r.Value == nil:
		value = "null (a tombstone)"
	}
	hs := make([]string, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = krecord.EscapeLine(h.Key, 40) + "=" + krecord.EscapeLine(h.Value, 60)
	}
	headers := "none"
	if len(hs) > 0 {
		headers = strings.Join(hs, ", ")
	}
	row := func(label, v string) string { return fit(fmt.Sprintf("%-12s", label)+v, f.width) }
	return []string{row("partition", part), row("key", show(r.Key)), row("value", value), row("headers", headers)}
}

func (f *produceForm) ShortHelp() []key.Binding {
	b := func(k, d string) key.Binding { return key.NewBinding(key.WithKeys(k), key.WithHelp(k, d)) }
	switch f.stage {
	case stageConfirm:
		return []key.Binding{b("y", "write"), b("n", "back")}
	case stageDone:
		return []key.Binding{b("enter", "another"), b("esc", "close")}
	}
	return []key.Binding{b("enter", "review"), b("tab", "next field"), b("ctrl+n", "null"), b("esc", "cancel")}
}
func (f *produceForm) FullHelp() [][]key.Binding { return [][]key.Binding{f.ShortHelp()} }

// clusterLabel names where p and E write, for the confirmation.
func (m *Model) clusterLabel() string {
	s := "brokers " + brokerList(m.stream.brokers, 60)
	if m.opts.Cluster != "" {
		s = "cluster " + krecord.String(m.opts.Cluster) + " (" + brokerList(m.stream.brokers, 60) + ")"
	}
	return s
}

// openProduce is p: a form for a new record, on the selected partition's
// topic.
func (m *Model) openProduce() {
	if m.opts.Writer == nil {
		m.setStatus("writing records is not available in this session", m.c.theme.dim)
		return
	}
	f := newProduceForm(m.c, m.clusterLabel(), &m.nextID)
	topic := ""
	if p, ok := m.parts.selected(); ok {
		topic = p.Topic
	} else if len(m.stream.topics) > 0 {
		topic = m.stream.topics[0]
	}
	// The focus starts at the first field, prefilled: a form is read top
	// down, and tab moves on.
	f.inputs[pfTopic].SetValue(topic)
	f.inputs[pfTopic].CursorEnd()
	m.pushView(f)
}

// openEdit is E: the selected record in the form, to change and write
// again.
func (m *Model) openEdit() {
	if m.opts.Writer == nil {
		m.setStatus("writing records is not available in this session", m.c.theme.dim)
		return
	}
	r := m.selectedRecord()
	switch {
	case r == nil:
		m.setStatus("E re-produces the selected record: select one in the records pane, a detail or a replay", m.c.theme.dim)
		return
	case !r.complete():
		m.setStatus("E needs the whole record; only the first "+formatBytes(maxKeptBytes)+" of a part of this one are kept: p with a value file writes it", m.c.theme.warn)
		return
	case len(r.Value.Data) > maxEditBytes || len(r.Key.Data) > maxEditBytes:
		m.setStatus("this record is too large to edit on one line ("+formatBytes(int64(r.Value.Size))+"): p with a value file writes it", m.c.theme.warn)
		return
	}
	f := newProduceForm(m.c, m.clusterLabel(), &m.nextID)
	f.prefill(r)
	m.pushView(f)
}

// produce writes a confirmed record off the update loop.
func (m *Model) produce(msg produceRequestMsg) tea.Cmd {
	w, ctx := m.opts.Writer, m.ctx
	m.bg.Add(1)
	return func() tea.Msg {
		defer m.bg.Done()
		req := msg.req
		if msg.file != "" {
			b, err := readValueFile(msg.file)
			if err != nil {
				return produceDoneMsg{id: msg.id, req: req, err: err}
			}
			req.Value = b
		}
		res, err := w.Write(ctx, req)
		return produceDoneMsg{id: msg.id, req: req, result: res, err: err}
	}
}

func readValueFile(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("value file: %v", cause(err))
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxValueFile+1))
	if err != nil {
		return nil, fmt.Errorf("value file %s: %v", path, cause(err))
	}
	if len(b) > maxValueFile {
		return nil, fmt.Errorf("value file %s grew beyond %s", path, formatBytes(maxValueFile))
	}
	return b, nil
}

func (m *Model) produceDone(msg produceDoneMsg) tea.Cmd {
	if msg.err != nil {
		m.setStatus("write failed: "+krecord.String(msg.err.Error()), m.c.theme.bad)
	} else {
		m.setStatus(fmt.Sprintf("wrote 1 record to %s at offset %d on %s", krecord.String(fmt.Sprintf("%s[%d]", msg.req.Topic, msg.result.Partition)), msg.result.Offset, m.clusterLabel()), m.c.theme.ok)
	}
	for _, v := range m.views {
		if f, ok := v.(*produceForm); ok && f.pending == msg.id {
			return f.Update(msg)
		}
	}
	return nil
}
