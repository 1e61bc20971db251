package tui

import "charm.land/bubbles/v2/key"

// keyMap holds every binding; panes and views pick theirs for help.
type keyMap struct {
	Up, Down, Top, Bottom, PageUp, PageDown key.Binding
	Enter, Back                             key.Binding
	Next, Prev                              key.Binding
	PauseAll, PausePart, Seek, Replay       key.Binding
	Ack, Step                               key.Binding
	Filter, Copy, Write, SparkExport        key.Binding
	Dismiss                                 key.Binding
	SeekAll                                 key.Binding
	Decoded                                 key.Binding
	// Info opens the batch's details from its records view; AllRecords
	// opens the records view of the selected batch.
	Info, AllRecords key.Binding
	Help, Quit       key.Binding
	// Record lists (recordview.go): wrap values, scroll them, show only
	// them; the tail view, the search's matches and its broker search.
	Wrap, ValueOnly, ScrollLeft, ScrollRight key.Binding
	Tail, BrokerSearch, NextMatch, PrevMatch key.Binding
	// Produce, Edit, SortParts, Palette, Cluster, Groups (produce.go,
	// palette.go, groupsview.go, cluster.go; routed by route_more.go).
	Produce, Edit, SortParts, Palette, Cluster, Groups key.Binding
	// SetGroup puts a consumer group at a batch or partition (setgroup.go).
	SetGroup key.Binding
}

func newKeyMap() keyMap {
	b := func(keys []string, help, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Up:        b([]string{"k", "up"}, "k/↑", "up"),
		Down:      b([]string{"j", "down"}, "j/↓", "down"),
		Top:       b([]string{"g", "home"}, "g", "top"),
		Bottom:    b([]string{"G", "end"}, "G", "bottom"),
		PageUp:    b([]string{"pgup", "ctrl+u"}, "pgup", "page up"),
		PageDown:  b([]string{"pgdown", "ctrl+d"}, "pgdn", "page down"),
		Enter:     b([]string{"enter"}, "enter", "details"),
		Back:      b([]string{"esc"}, "esc", "back"),
		Next:      b([]string{"tab"}, "tab", "next pane"),
		Prev:      b([]string{"shift+tab"}, "shift+tab", "prev pane"),
		PauseAll:  b([]string{"space"}, "space", "pause all"),
		PausePart: b([]string{"P"}, "P", "pause partition"),
		Seek:      b([]string{"s"}, "s", "seek"),
		// SeekAll seeks every partition of the stream (or of a topic).
		SeekAll: b([]string{"S"}, "S", "seek all"),
		Replay:  b([]string{"r"}, "r", "replay"),
		Ack:     b([]string{"a"}, "a", "ack batch"),
		Step:    b([]string{"n"}, "n", "next batch"),
		Filter:  b([]string{"/"}, "/", "filter"),
		Copy:    b([]string{"y"}, "y", "copy value"),
		Write:   b([]string{"w"}, "w", "write file"),
		// SparkExport shows and copies a batch as Spark options.
		SparkExport: b([]string{"e"}, "e", "Spark offsets"),
		// Dismiss clears the data-loss warning (header, partitions).
		Dismiss: b([]string{"x"}, "x", "dismiss data loss"),
		// Decoded cycles a record's detail: decoded, raw text, hex dump.
		Decoded: b([]string{"v"}, "v", "decoded/raw/hex"),
		Info:    b([]string{"i"}, "i", "batch details"),
		// AllRecords lists every record of the selected batch.
		AllRecords: b([]string{"b"}, "b", "all records of the batch"),
		Help:       b([]string{"?"}, "?", "help"),
		Quit:       b([]string{"q", "ctrl+c"}, "q", "quit"),

		Wrap:         b([]string{"z"}, "z", "wrap values"),
		ValueOnly:    b([]string{"V"}, "V", "value only"),
		ScrollLeft:   b([]string{"h", "left"}, "h/←", "scroll left"),
		ScrollRight:  b([]string{"l", "right"}, "l/→", "scroll right"),
		Tail:         b([]string{"t"}, "t", "tail"),
		BrokerSearch: b([]string{"f"}, "f", "search on broker"),
		NextMatch:    b([]string{"]"}, "]", "next match"),
		PrevMatch:    b([]string{"["}, "[", "prev match"),
		Produce:      b([]string{"p"}, "p", "produce a record"),
		Edit:         b([]string{"E"}, "E", "edit and re-produce record"),
		SortParts:    b([]string{"o"}, "o", "sort partitions"),
		Palette:      b([]string{":"}, ":", "command palette"),
		Cluster:      b([]string{"c"}, "c", "switch cluster"),
		Groups:       b([]string{"C"}, "C", "consumer groups"),
		SetGroup:     b([]string{"O"}, "O", "set group offsets…"),
	}
}

// withHelp returns b with another description, for keys whose effect
// depends on the state (space pauses or resumes).
func withHelp(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// simpleHelp adapts binding lists to help.KeyMap.
type simpleHelp struct {
	short []key.Binding
	full  [][]key.Binding
}

func (h simpleHelp) ShortHelp() []key.Binding  { return h.short }
func (h simpleHelp) FullHelp() [][]key.Binding { return h.full }
