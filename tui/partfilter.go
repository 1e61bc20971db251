package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kbatch-dev/kbatch/consumer"
	krecord "github.com/kbatch-dev/kbatch/record"
)

// partFilter is / in the partitions pane: it shows only the partitions
// that match every word of the query: lag>N, lag>=N, lag<N, lag<=N,
// lag=N; a state (live, paused, error, loss); else a substring of the
// partition's name topic[N], any case.
type partFilter struct {
	input   textinput.Model
	editing bool
	query   string
	shown   []int // rows that match, when query is set
	problem string
}

func newPartFilterInput() textinput.Model {
	in := newLineInput("/ ", "name, state (live paused error loss) or lag>N")
	return in
}

// active reports whether the filter line shows.
func (f *partFilter) active() bool { return f.editing || f.query != "" }

// rowAt maps the i-th row on screen to an index into rows.
func (p *partitionsPane) rowAt(i int) int {
	if p.pf.query == "" {
		return i
	}
	return p.pf.shown[i]
}

// rowCount is how many rows the pane lists.
func (p *partitionsPane) rowCount() int {
	if p.pf.query == "" {
		return len(p.rows)
	}
	return len(p.pf.shown)
}

// startFilter opens the filter line.
func (p *partitionsPane) startFilter() tea.Cmd {
	if p.pf.input.Prompt == "" {
		p.pf.input = newPartFilterInput()
	}
	p.pf.editing = true
	p.pf.input.SetValue(p.pf.query)
	p.pf.input.CursorEnd()
	p.SetSize(p.width, p.height)
	return p.pf.input.Focus()
}

// pasteFilter types pasted text into the filter line while it is edited.
func (p *partitionsPane) pasteFilter(msg tea.PasteMsg) tea.Cmd {
	if !p.pf.editing {
		return nil
	}
	cmd := typeInto(&p.pf.input, msg)
	p.setFilter(p.pf.input.Value())
	return cmd
}

// filterKey takes a key while the filter line is edited.
func (p *partitionsPane) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		p.pf.editing = false
		p.pf.input.Blur()
	case "esc":
		p.pf.editing = false
		p.pf.input.Blur()
		p.pf.input.SetValue("")
	default:
		cmd := typeInto(&p.pf.input, msg)
		p.setFilter(p.pf.input.Value())
		return cmd
	}
	p.setFilter(p.pf.input.Value())
	p.SetSize(p.width, p.height)
	return nil
}

// clearFilter is esc with a filter set; it reports whether there was one.
func (p *partitionsPane) clearFilter() bool {
	if p.pf.query == "" {
		return false
	}
	p.pf.input.SetValue("")
	p.setFilter("")
	p.SetSize(p.width, p.height)
	return true
}

func (p *partitionsPane) setFilter(q string) {
	sel, hadSel := p.selected()
	p.pf.query = strings.TrimSpace(q)
	p.refilter()
	if hadSel {
		for i := 0; i < p.rowCount(); i++ {
			if p.rows[p.rowAt(i)].Partition == sel.Partition {
				p.cur.sel = i
				break
			}
		}
	}
	p.cur.clamp()
}

// refilter recomputes the rows shown.
func (p *partitionsPane) refilter() {
	p.pf.shown = p.pf.shown[:0]
	p.pf.problem = ""
	if p.pf.query != "" {
		terms := strings.Fields(strings.ToLower(p.pf.query))
		for i, r := range p.rows {
			if p.matchAll(r, terms) {
				p.pf.shown = append(p.pf.shown, i)
			}
		}
	}
	p.cur.setLen(p.rowCount())
}

func (p *partitionsPane) matchAll(r consumer.PartitionStatus, terms []string) bool {
	for _, t := range terms {
		if !p.matchTerm(r, t) {
			return false
		}
	}
	return true
}

// matchTerm matches one lower-case word of the query.
func (p *partitionsPane) matchTerm(r consumer.PartitionStatus, t string) bool {
	if rest, ok := strings.CutPrefix(t, "lag"); ok && rest != "" && strings.ContainsAny(rest[:1], "<>=") {
		op := rest[:1]
		if len(rest) > 1 && rest[1] == '=' {
			op, rest = rest[:2], rest[2:]
		} else {
			rest = rest[1:]
		}
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			p.pf.problem = "lag" + op + " needs a whole number, e.g. lag>1000"
			return false
		}
		lag := p.lag(r) // what LAG shows (from the acked position under --ack manual)
		switch op {
		case ">":
			return lag > n
		case ">=":
			return lag >= n
		case "<":
			return lag < n
		case "<=":
			return lag <= n
		default: // "=" and "=="
			return lag == n
		}
	}
	state, _ := p.state(r)
	switch t {
	case "live", "paused", "error", corruptState:
		return state == t
	case "loss":
		return state == lossState
	}
	name := strings.ToLower(krecord.String(r.Topic)) + "[" + strconv.Itoa(int(r.Partition.Partition)) + "]"
	return strings.Contains(name, t)
}

// filterLine is the filter's line above the table.
func (p *partitionsPane) filterLine() string {
	if p.pf.editing {
		s := p.pf.input.View()
		if p.pf.problem != "" {
			s += "  " + p.theme.warn.Render(p.pf.problem)
		}
		return ansi.Truncate(s, max(0, p.width), "…")
	}
	s := p.theme.info.Render("/ "+krecord.String(p.pf.query)) + p.theme.dim.Render("  ("+strconv.Itoa(len(p.pf.shown))+" of "+strconv.Itoa(len(p.rows))+"; esc clears)")
	if p.pf.problem != "" {
		s += "  " + p.theme.warn.Render(p.pf.problem)
	}
	return ansi.Truncate(s, max(0, p.width), "…")
}

// filterTitle is the title's filter part, or "".
func (p *partitionsPane) filterTitle() string {
	if p.pf.query == "" {
		return ""
	}
	return " · filter " + strconv.Quote(p.pf.query) + " " + strconv.Itoa(len(p.pf.shown)) + " of " + strconv.Itoa(len(p.rows))
}
