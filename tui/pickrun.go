package tui

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// PickTopics shows the topic picker until the user starts with one or
// more topics (returned in list order) or quits (nil, nil). A failure to
// list topics is shown in the picker, never returned; the error is the
// terminal's. NO_COLOR and extra options work as for Run.
func PickTopics(ctx context.Context, l TopicLister, opts PickerOptions, extra ...tea.ProgramOption) ([]string, error) {
	topics, _, err := PickStream(ctx, l, opts, extra...)
	return topics, err
}

// PickStream is PickTopics that also returns the answer to the start
// question (opts.Ask; "" when not asked).
func PickStream(ctx context.Context, l TopicLister, opts PickerOptions, extra ...tea.ProgramOption) ([]string, string, error) {
	m := NewPicker(l, opts)
	defer m.Close()
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if os.Getenv("NO_COLOR") != "" {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	_, err := tea.NewProgram(m, append(popts, extra...)...).Run()
	if err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("terminal UI: %w", err)
	}
	if opts.Ask != nil && m.StartChoice() == "" {
		return nil, "", nil // quit at the start question
	}
	return m.Chosen(), m.StartChoice(), nil
}
