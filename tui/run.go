package tui

import (
	"context"
	"errors"
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/kbatch-dev/kbatch/consumer"
)

// Run shows the stream until the user quits (q, ctrl+c) or ctx ends, then
// stops replays and writes in flight, closes the stream cleanly (a batch
// being processed is acked; one waiting for a manual ack stays planned)
// and returns. It returns the stream's own error when the stream ended
// with one (the screen showed it and stayed up until the user quit).
//
// NO_COLOR set to any non-empty value turns colours off; extra options
// (output, input, window size, colour profile) are for tests and demos.
//
// ctl is nil for a source without controls (a read-only view).
func Run(ctx context.Context, s Stream, ctl Controls, opts Options, extra ...tea.ProgramOption) error {
	m := New(s, ctl, opts)
	if g := opts.SampleGate; g != nil {
		// The soft heap limit follows the samples held (heaplimit.go).
		g.heap.start()
		defer g.heap.stop()
	}
	_, runErr := tea.NewProgram(m, programOptions(ctx, extra)...).Run()
	m.Close()

	// Drain while closing: the stream's last event waits for a reader.
	drained := make(chan error, 1)
	go func() {
		var endErr error
		for ev := range s.Events() {
			if e, ok := ev.(*consumer.Ended); ok {
				endErr = e.Err
			}
		}
		drained <- endErr
	}()
	closeErr := s.Close()
	endErr := <-drained
	if e := m.stream.ended; e != nil && endErr == nil {
		endErr = e.Err
	}

	if err := programError(ctx, runErr); err != nil {
		return err
	}
	if m.switchTo != "" {
		return &SwitchCluster{Profile: m.switchTo}
	}
	if endErr != nil {
		return endErr
	}
	if closeErr != nil {
		return fmt.Errorf("closing the stream: %w", closeErr)
	}
	return nil
}

// programOptions are the options of a program that ends with ctx and
// shows no colour when NO_COLOR is set to any non-empty value, then extra.
func programOptions(ctx context.Context, extra []tea.ProgramOption) []tea.ProgramOption {
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if os.Getenv("NO_COLOR") != "" {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	return append(popts, extra...)
}

// programError is what a program's Run error means to the caller: nothing
// when ctx ended the program (the caller asked it to stop), else a
// failure of the terminal.
func programError(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("terminal UI: %w", err)
}

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
	if _, err := tea.NewProgram(m, programOptions(ctx, extra)...).Run(); err != nil {
		return nil, "", programError(ctx, err)
	}
	if opts.Ask != nil && m.StartChoice() == "" {
		return nil, "", nil // quit at the start question
	}
	return m.Chosen(), m.StartChoice(), nil
}
