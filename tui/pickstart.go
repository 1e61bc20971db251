package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/kbatch-dev/kbatch/offsets"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// StartQuestion is what the picker knows of the stream a pick makes, to
// ask where it starts.
type StartQuestion struct {
	// Stream is the stream's name (derived from the topics or --name).
	Stream string
	// Stored is set when the store holds positions of the stream: then
	// "resume" is offered, after LastBatch (acked at AckedAt, shown in
	// its own time zone).
	Stored    bool
	LastBatch uint64
	AckedAt   time.Time
	// Default is the answer offered first: the one remembered for the
	// stream, else "resume" when stored, else the --reset value.
	Default string
	// Remember says where the answer is remembered ("" when it is not,
	// e.g. --no-store).
	Remember string
	// Reset is --reset: where partitions without a position start when
	// resuming.
	Reset string
}

// StartAsker returns the question for the picked topics.
type StartAsker func(topics []string) StartQuestion

// ChoiceResume is the start answer that keeps the stored positions.
const ChoiceResume = "resume"

// ParseStartChoice checks a start answer: "resume", or a target as -o
// takes it (an offset, earliest, latest, -N, @TIME). It returns the
// answer as it is to be remembered.
func ParseStartChoice(s string, now time.Time) (string, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, ChoiceResume) {
		return ChoiceResume, nil
	}
	if _, err := offsets.ParseTarget(s, now); err != nil {
		return "", err
	}
	return s, nil
}

// startAsk is the picker's second step: where the picked topics start.
type startAsk struct {
	q       StartQuestion
	topics  []string
	records int64
	choices []startChoice
	cur     int
	input   textinput.Model
	problem string
}

type startChoice struct{ value, desc string }

func newStartAsk(q StartQuestion, topics []string, records int64) *startAsk {
	a := &startAsk{q: q, topics: topics, records: records}
	if q.Stored {
		desc := fmt.Sprintf("where stream %s stopped: after batch %d", krecord.String(q.Stream), q.LastBatch)
		if !q.AckedAt.IsZero() {
			desc += ", acked " + q.AckedAt.Format("2006-01-02 15:04:05")
		}
		a.choices = append(a.choices, startChoice{ChoiceResume, desc + " (partitions never stored: " + q.Reset + ")"})
	}
	a.choices = append(a.choices,
		startChoice{"latest", "only records written from now on"},
		startChoice{"earliest", fmt.Sprintf("everything the topics hold (%s)", plural(records, "record", "records"))},
		startChoice{"-100", "the last 100 records of every partition (any -N)"},
		startChoice{"@-1h", "records of the last hour on (any @TIME: @-15m, or RFC 3339)"},
	)
	in := newLineInput("start> ", "resume, latest, earliest, -N, @TIME or an offset")
	in.Focus()
	def := q.Default
	if def == "" {
		def = "latest"
	}
	in.SetValue(def)
	in.CursorEnd()
	for i, c := range a.choices {
		if c.value == def {
			a.cur = i
		}
	}
	a.input = in
	return a
}

// key handles a key of the question; done is set when enter gave a valid
// answer, back when esc asks for the topic list again.
func (a *startAsk) key(k tea.KeyPressMsg, now time.Time) (done, back bool, cmd tea.Cmd) {
	switch k.String() {
	case "esc":
		return false, true, nil
	case "up", "down":
		d := 1
		if k.String() == "up" {
			d = -1
		}
		a.cur = (a.cur + d + len(a.choices)) % len(a.choices)
		a.input.SetValue(a.choices[a.cur].value)
		a.input.CursorEnd()
		a.problem = ""
		return false, false, nil
	case "enter":
		if strings.EqualFold(strings.TrimSpace(a.input.Value()), ChoiceResume) && !a.q.Stored {
			a.problem = fmt.Sprintf("stream %s has no stored positions to resume from: pick latest, earliest, -N or @TIME", a.q.Stream)
			return false, false, nil
		}
		v, err := ParseStartChoice(a.input.Value(), now)
		if err != nil {
			a.problem = err.Error()
			return false, false, nil
		}
		a.input.SetValue(v)
		return true, false, nil
	}
	a.problem = ""
	a.input, cmd = a.input.Update(k)
	return false, false, cmd
}

func (a *startAsk) title() string {
	return "Where to start · stream " + krecord.String(a.q.Stream)
}

func (a *startAsk) lines(th *theme, w int) []string {
	intro := wrap(fmt.Sprintf("Where should %s start reading? ↑/↓ picks, or type as -o takes it: an offset, earliest, latest, -N (per partition), @TIME.",
		krecord.String(strings.Join(a.topics, ", "))), w-4)
	var lines []string
	for _, l := range strings.Split(intro, "\n") {
		lines = append(lines, " "+l)
	}
	lines = append(lines, "")
	valW := 9
	for _, c := range a.choices {
		valW = max(valW, len(c.value)+1)
	}
	rowW := max(10, w-4)
	for i, c := range a.choices {
		desc := strings.Split(wrap(c.desc, max(10, rowW-valW-1)), "\n")
		for j, d := range desc {
			head := fit(c.value, valW)
			if j > 0 {
				head = strings.Repeat(" ", valW)
			}
			lines = append(lines, markRow(th, fit(head+" "+d, rowW), i == a.cur && j == 0, true))
		}
	}
	lines = append(lines, "", " "+a.input.View(), "")
	switch {
	case a.problem != "":
		lines = append(lines, " "+th.bad.Render(krecord.String(a.problem)))
	case a.q.Remember != "":
		lines = append(lines, " "+th.dim.Render("the answer is remembered for stream "+krecord.String(a.q.Stream)+" ("+krecord.String(a.q.Remember)+")"))
	default:
		lines = append(lines, " "+th.dim.Render("not remembered: nothing is stored in this session"))
	}
	return lines
}

func (a *startAsk) help() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "start")),
		key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "pick")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back to the topics")),
	}
}
