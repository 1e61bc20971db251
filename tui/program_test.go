package tui

import (
	"bytes"
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"github.com/charmbracelet/x/vt"

	"github.com/kbatch-dev/kbatch/consumer"
)

// programRun is one run of the real bubbletea program at a fixed size and
// colour profile: raw is every byte it wrote, screen the text a terminal
// shows at the end (the alternate screen before the program left it).
type programRun struct {
	raw    []byte
	screen string
	model  *Model
}

// runProgram starts the program over a fake stream, hands it the events
// as one burst (as the bridge would), then the keys, in order, then
// ctrl+c.
// Messages reach Update in the order sent, so no waiting is needed.
func runProgram(t *testing.T, w, h int, opts Options, evs []consumer.Event, keys ...string) programRun {
	t.Helper()
	return runProgramProfile(t, colorprofile.ANSI, w, h, opts, evs, keys...)
}

// runProgramProfile is runProgram with another colour profile.
func runProgramProfile(t *testing.T, profile colorprofile.Profile, w, h int, opts Options, evs []consumer.Event, keys ...string) programRun {
	t.Helper()
	m, fs := newTestModel(t, w, h, opts)
	fs.boundsGate = make(chan struct{})
	t.Cleanup(func() { close(fs.boundsGate); _ = fs.Close() })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h), teatest.WithProgramOptions(
		tea.WithColorProfile(profile),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}),
	))
	tm.Send(eventsMsg{events: evs, at: t0})
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
	tm.Send(keyMsg("ctrl+c")) // quits even with a form open
	raw, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	return programRun{raw: raw, screen: emulate(t, raw, w, h), model: m}
}

// emulate replays raw output on a vt emulator of w×h and returns the
// alternate screen's text as it was before the program left it.
func emulate(t *testing.T, raw []byte, w, h int) string {
	t.Helper()
	if i := bytes.LastIndex(raw, []byte("\x1b[?1049l")); i >= 0 {
		raw = raw[:i]
	}
	// The program's output is not a tty, so it writes "\n" and counts on
	// the terminal driver's ONLCR, as a real tty would add "\r".
	raw = bytes.ReplaceAll(raw, []byte("\n"), []byte("\r\n"))
	e := vt.NewSafeEmulator(w, h)
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, e); close(done) }() // answers to queries
	if _, err := e.Write(raw); err != nil {
		t.Fatal(err)
	}
	s := e.String()
	// Closing the input pipe ends the reader (Close would race with it).
	if c, ok := e.InputPipe().(io.Closer); ok {
		_ = c.Close()
	}
	<-done
	return s
}

// runEventsUntil runs the program over evs, sends keys, and returns the
// screen once until was drawn.
func runEventsUntil(t *testing.T, w, h int, opts Options, evs []consumer.Event, until string, keys ...string) string {
	t.Helper()
	m, fs := newTestModel(t, w, h, opts)
	t.Cleanup(func() { _ = fs.Close() })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h), teatest.WithProgramOptions(
		tea.WithColorProfile(colorprofile.ANSI), tea.WithEnvironment([]string{"TERM=xterm-256color"})))
	tm.Send(eventsMsg{events: evs, at: t0})
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
	var seen bytes.Buffer
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		seen.Write(b)
		return bytes.Contains(seen.Bytes(), []byte(until))
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(5*time.Millisecond))
	tm.Send(keyMsg("ctrl+c"))
	rest, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	return emulate(t, append(seen.Bytes(), rest...), w, h)
}

// runProgramSetup is runProgram with setup run on the model before the
// program starts.
func runProgramSetup(t *testing.T, w, h int, opts Options, setup func(*Model), evs []consumer.Event, keys ...string) string {
	t.Helper()
	m, fs := newTestModel(t, w, h, opts)
	t.Cleanup(func() { _ = fs.Close() })
	if setup != nil {
		setup(m)
	}
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h), teatest.WithProgramOptions(
		tea.WithColorProfile(colorprofile.ANSI), tea.WithEnvironment([]string{"TERM=xterm-256color"})))
	tm.Send(eventsMsg{events: evs, at: t0})
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
	tm.Send(keyMsg("ctrl+c"))
	raw, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	return emulate(t, raw, w, h)
}
