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
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if os.Getenv("NO_COLOR") != "" {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, append(popts, extra...)...)
	_, runErr := p.Run()
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

	if runErr != nil && !(errors.Is(runErr, tea.ErrProgramKilled) && ctx.Err() != nil) {
		return fmt.Errorf("terminal UI: %w", runErr)
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
