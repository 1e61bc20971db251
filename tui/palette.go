package tui

import (
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// paletteEntry is one action of the command palette: a key binding of the
// keyMap (the one table the keys, the footer and the palette read, so
// they cannot drift), or a pane to focus. Choosing it sends its key, as if
// typed on the screen under the palette.
type paletteEntry struct {
	name    string // what it does
	keys    string // the key, as help shows it
	press   string // the key press sent
	enabled bool
	field   string // the keyMap field, "" for a pane
	why     string // why it cannot run here; "" when it can
}

// paletteSkip are the bindings that only move a selection: the palette
// lists what a person would search for.
var paletteSkip = map[string]bool{"Up": true, "Down": true, "Top": true, "Bottom": true,
	"PageUp": true, "PageDown": true, "Palette": true}

// paletteEntries lists every action: every binding of km in field order,
// then the panes by number.
func paletteEntries(km keyMap) []paletteEntry {
	var out []paletteEntry
	v := reflect.ValueOf(km)
	bt := reflect.TypeOf(key.Binding{})
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if f.Type != bt || paletteSkip[f.Name] {
			continue
		}
		b := v.Field(i).Interface().(key.Binding)
		if len(b.Keys()) == 0 {
			continue
		}
		out = append(out, paletteEntry{name: b.Help().Desc, keys: b.Help().Key, press: b.Keys()[0], enabled: b.Enabled(), field: f.Name})
	}
	for i, name := range []string{"partitions", "batches", "records", "events"} {
		k := string(rune('1' + i))
		out = append(out, paletteEntry{name: "focus the " + name + " pane", keys: k, press: k, enabled: true})
	}
	return out
}

// fuzzyScore reports whether every rune of q appears in s in order
// (ignoring case) and how well: consecutive runes and runes at the start
// of a word score more, a match further in scores less.
func fuzzyScore(s, q string) (int, bool) {
	s, q = strings.ToLower(s), strings.ToLower(q)
	if q == "" {
		return 0, true
	}
	score, si, prev := 0, 0, -2
	for _, qr := range q {
		found := false
		for si < len(s) {
			r, n := utf8.DecodeRuneInString(s[si:])
			at := si
			si += n
			if r != qr {
				continue
			}
			found = true
			score++
			if at == prev+1 {
				score += 3
			}
			if at == 0 || s[at-1] == ' ' {
				score += 2
			}
			if prev < 0 {
				score -= min(at, 10) / 3
			}
			prev = at
			break
		}
		if !found {
			return 0, false
		}
	}
	return score, true
}

// palette is ":": a filter and the actions that match it.
type palette struct {
	*common
	all    []paletteEntry
	shown  []int
	input  textinput.Model
	cur    cursor
	width  int
	height int
}

// paletteRunMsg runs the chosen action's key on the screen under the
// palette (which has closed), or shows why it cannot run there.
type paletteRunMsg struct{ press, why string }

// guard marks the actions that cannot run, with why (cannotRun).
func (p *palette) guard(why func(field string) string) {
	for i := range p.all {
		if e := &p.all[i]; e.field != "" {
			e.why = why(e.field)
		}
	}
}

// newPalette lists every action; why says which cannot run (cannotRun).
func newPalette(c *common, why func(field string) string) *palette {
	in := newLineInput(": ", "type part of an action: seek, replay, groups…")
	in.Focus()
	p := &palette{common: c, all: paletteEntries(c.keys), input: in}
	p.guard(why)
	p.refilter()
	return p
}

func (p *palette) refilter() {
	q := p.input.Value()
	type hit struct{ i, score int }
	var hits []hit
	for i, e := range p.all {
		if s, ok := fuzzyScore(e.name+" "+e.keys, q); ok {
			hits = append(hits, hit{i, s})
		}
	}
	// What can run comes first; what cannot (greyed, with why) after.
	sort.SliceStable(hits, func(a, b int) bool {
		if wa, wb := p.all[hits[a].i].why != "", p.all[hits[b].i].why != ""; wa != wb {
			return wb
		}
		return hits[a].score > hits[b].score
	})
	p.shown = p.shown[:0]
	for _, h := range hits {
		p.shown = append(p.shown, h.i)
	}
	p.cur.setLen(len(p.shown))
	p.cur.home()
}

func (p *palette) SetSize(w, h int) {
	p.width, p.height = w, h
	p.input.SetWidth(max(10, w-4))
	p.cur.setHeight(max(1, min(h-2, 16)))
}

func (p *palette) capturing() bool { return true }
func (p *palette) dialog() bool    { return true }
func (p *palette) title() string   { return "Command palette" }

func (p *palette) Update(msg tea.Msg) tea.Cmd {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	switch ks := k.String(); ks {
	case "esc":
		return closeView
	case "up", "ctrl+p":
		p.cur.move(-1)
	case "down", "ctrl+n":
		p.cur.move(1)
	case "enter":
		if p.cur.sel < len(p.shown) {
			e := p.all[p.shown[p.cur.sel]]
			run := paletteRunMsg{press: e.press, why: e.why}
			return func() tea.Msg { return run }
		}
	default:
		cmd := typeInto(&p.input, k)
		p.refilter()
		return cmd
	}
	return nil
}

// paste types pasted text into the palette's filter.
func (p *palette) paste(msg tea.PasteMsg) tea.Cmd {
	cmd := typeInto(&p.input, msg)
	p.refilter()
	return cmd
}

func (p *palette) View() string {
	lines := []string{p.input.View()}
	if len(p.shown) == 0 {
		return strings.Join(append(lines, p.theme.dim.Render("  no action matches")), "\n")
	}
	from, until := p.cur.visible()
	for i := from; i < until; i++ {
		e := p.all[p.shown[i]]
		line := fit(e.keys, 10) + " " + e.name
		if e.why != "" {
			line = fit(line+" · "+e.why, max(10, p.width-2))
		}
		if (!e.enabled || e.why != "") && i != p.cur.sel {
			line = p.theme.dim.Render(line)
		}
		lines = append(lines, markRow(&p.theme, line, i == p.cur.sel, true))
	}
	if n := len(p.shown); until < n || from > 0 {
		lines = append(lines, p.theme.dim.Render("  ↑↓ more: "+plural(int64(n), "action", "actions")))
	}
	return strings.Join(lines, "\n")
}

func (p *palette) ShortHelp() []key.Binding {
	return []key.Binding{
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
		key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "move")),
		key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
	}
}
func (p *palette) FullHelp() [][]key.Binding { return [][]key.Binding{p.ShortHelp()} }

// pressOf is the key press that prints as s ("enter", "shift+tab", "?",
// "ctrl+c", "E"): what the palette sends for an action.
func pressOf(s string) tea.KeyPressMsg {
	named := map[string]rune{"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "space": tea.KeySpace,
		"backspace": tea.KeyBackspace, "up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"home": tea.KeyHome, "end": tea.KeyEnd, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown}
	var mod tea.KeyMod
	switch {
	case strings.HasPrefix(s, "ctrl+"):
		mod, s = tea.ModCtrl, strings.TrimPrefix(s, "ctrl+")
	case strings.HasPrefix(s, "shift+"):
		mod, s = tea.ModShift, strings.TrimPrefix(s, "shift+")
	}
	if c, ok := named[s]; ok {
		k := tea.KeyPressMsg{Code: c, Mod: mod}
		if c == tea.KeySpace {
			k.Text = " "
		}
		return k
	}
	r, _ := utf8.DecodeRuneInString(s)
	if mod != 0 {
		return tea.KeyPressMsg{Code: r, Mod: mod}
	}
	if r >= 'A' && r <= 'Z' {
		return tea.KeyPressMsg{Code: r + 'a' - 'A', ShiftedCode: r, Text: s, Mod: tea.ModShift}
	}
	return tea.KeyPressMsg{Code: r, Text: s}
}
