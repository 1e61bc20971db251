package tui

import (
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// newLineInput is a one-line text field with prompt and placeholder (""
// for none) and a cursor that does not blink: every field of the screen
// draws the same steady cursor, whatever form it is in.
func newLineInput(prompt, placeholder string) textinput.Model {
	in := textinput.New()
	in.Prompt = prompt
	in.Placeholder = placeholder
	st := in.Styles()
	st.Cursor.Blink = false
	in.SetStyles(st)
	return in
}

// typeInto hands msg (a key press or a paste) to the field in and returns
// the field's command.
func typeInto(in *textinput.Model, msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	*in, cmd = in.Update(msg)
	return cmd
}
