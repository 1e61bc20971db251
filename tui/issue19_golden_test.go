package tui

import (
	"bytes"
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kbatch-dev/kbatch/offsets"
)

// runProgramUntil is runProgram that, after the keys, waits until the
// output holds until (an answer computed off the update loop) before it
// quits.
func runProgramUntil(t *testing.T, w, h int, opts Options, until string, keys ...string) string {
	t.Helper()
	m, fs := newTestModel(t, w, h, opts)
	t.Cleanup(func() { _ = fs.Close() })
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h), teatest.WithProgramOptions(
		tea.WithColorProfile(colorprofile.ANSI),
		tea.WithEnvironment([]string{"TERM=xterm-256color"}),
	))
	tm.Send(eventsMsg{events: goldenEvents(), at: t0})
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

func goldenGroups() *fakeGroups {
	return &fakeGroups{total: 9, groups: []ConsumerGroup{
		{Name: "billing", State: "Stable", Members: 3, Offsets: map[offsets.Partition]int64{
			part("events", 0): 11, part("events", 1): 150, part("events", 2): 213, part("events", 3): 40}},
		{Name: "fraud-scoring", State: "Empty", Offsets: map[offsets.Partition]int64{part("events", 0): 2}},
		{Name: "legacy-audit", Err: errTest(`not authorized to read group "legacy-audit": the user needs DESCRIBE on it (Kafka ACL)`)},
	}}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// Golden screens of issue 19's views: go test ./tui -run GoldenMore -update
// rewrites them.
func TestGoldenMoreScreens(t *testing.T) {
	profiles := []Profile{{Name: "local", Brokers: []string{"127.0.0.1:9092"}}, {Name: "staging", Brokers: []string{"kafka-1.staging:9092", "kafka-2.staging:9092"}},
		{Name: "prod-eu", Brokers: []string{"b1.prod-eu.example:9093"}}}
	opts := Options{StorePath: "/home/me/.local/state/kbatch/offsets.db", Replayer: &fakeReplayer{}, Writer: &fakeWriter{},
		Cluster: "local", Profiles: profiles}
	produce := []string{"p", "tab", "tab", "u", "s", "e", "r", "-", "7", "tab", "h", "i", "tab", "tab", "s", "=", "w", "enter"}
	tests := []struct {
		name  string
		w, h  int
		until string
		keys  []string
	}{
		{"produce_confirm_140x40", 140, 40, "", produce},
		{"produce_form_80x24", 80, 24, "", produce[:len(produce)-1]},
		{"palette_80x24", 80, 24, "", []string{":", "r", "e"}},
		{"palette_140x40", 140, 40, "", []string{":"}},
		{"clusters_80x24", 80, 24, "", []string{"c"}},
		{"groups_140x40", 140, 40, "legacy-audit", []string{"C"}},
		{"groups_80x24", 80, 24, "billing", []string{"C"}},
		{"sorted_by_lag_140x40", 140, 40, "", []string{"o"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := opts
			o.Groups = goldenGroups()
			var s string
			if tt.until == "" {
				s = runProgram(t, tt.w, tt.h, o, goldenEvents(), tt.keys...).screen
			} else {
				s = runProgramUntil(t, tt.w, tt.h, o, tt.until, tt.keys...)
			}
			golden.RequireEqual(t, []byte(s))
		})
	}
}
