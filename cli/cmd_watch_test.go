package cli

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestWatchPlan: the decisions watch makes from its flags alone, before it
// opens anything, and the order its usage errors come in.
func TestWatchPlan(t *testing.T) {
	for _, tc := range []struct {
		label  string
		global []string
		args   []string
		isErr  error  // errors.Is
		want   string // in the error; "" for no error
		pick   bool
		topics []string
	}{
		{label: "no topic, no brokers: ask for brokers first", isErr: errNoBrokers},
		{label: "no topic in the TUI: the picker asks", global: []string{"-b", "h:1"}, pick: true},
		{label: "no topic headless", global: []string{"-b", "h:1"}, args: []string{"--no-tui"}, isErr: errNoTopic},
		{label: "manual ack headless", args: []string{"-t", "e", "--ack", "manual", "--no-tui"}, want: "--ack manual needs the TUI"},
		{label: "stop conditions in the TUI", args: []string{"-t", "e", "--batches", "3"}, want: "headless stop conditions"},
		{label: "until-end in the TUI", args: []string{"-t", "e", "--until-end"}, want: "headless stop conditions"},
		{label: "bad format", args: []string{"-t", "e", "--format", "xml"}, want: `invalid --format "xml"`},
		{label: "sink stdout in the TUI", args: []string{"-t", "e", "--sink", "-"}, want: "--sink - writes records to stdout"},
		{label: "flag errors before combinations", args: []string{"-t", "e", "--interval", "0s", "--ack", "manual", "--no-tui"}, want: "invalid --interval"},
		{label: "ack before format", args: []string{"-t", "e", "--ack", "manual", "--no-tui", "--format", "xml"}, want: "--ack manual"},
		{label: "headless to stdout", args: []string{"-t", "b,a", "-t", "a", "--no-tui", "--sink", "-", "--format", "kcat"}, topics: []string{"b", "a"}},
	} {
		t.Run(tc.label, func(t *testing.T) {
			g, _ := testOptions(t, nil, tc.global...)
			p, err := parsedWatchOptions(t, tc.args).plan(g)
			switch {
			case tc.isErr != nil:
				if !errors.Is(err, tc.isErr) {
					t.Fatalf("err = %v, want %v", err, tc.isErr)
				}
				return
			case tc.want != "":
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one containing %q", err, tc.want)
				}
				if exitCode(err) != exitUsage {
					t.Errorf("exit code %d, want %d", exitCode(err), exitUsage)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if p.pick != tc.pick || p.enc == nil || !slices.Equal(p.cfg.Topics, tc.topics) {
				t.Errorf("plan = pick %v, enc %T, topics %v; want pick %v, topics %v", p.pick, p.enc, p.cfg.Topics, tc.pick, tc.topics)
			}
		})
	}
}

// TestCleanupsDeferredBeforeAdds: `defer done.run()` is written before
// anything is added; the functions added later still run, last first. (A
// value receiver would copy the empty list at the defer and close nothing:
// the store, the sink and the debug log's end line would be lost.)
func TestCleanupsDeferredBeforeAdds(t *testing.T) {
	var order []string
	func() {
		var done cleanups
		defer done.run()
		done.add(func() { order = append(order, "log") })
		done.add(func() { order = append(order, "store") })
		done.add(func() { order = append(order, "client") })
	}()
	if want := []string{"client", "store", "log"}; !slices.Equal(order, want) {
		t.Errorf("ran %v, want %v", order, want)
	}
}

// TestHeadlessKeepsNoSamples: samples are copies for the records pane and
// no JSON line carries them, so a headless watch keeps none whatever
// --samples says (a topic of 1 MiB values copied five per partition per
// batch for nobody); the TUI keeps what --samples asks.
func TestHeadlessKeepsNoSamples(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-t", "e"}, 5},
		{[]string{"-t", "e", "--samples", "7"}, 7},
		{[]string{"-t", "e", "--no-tui"}, 0},
		{[]string{"-t", "e", "--no-tui", "--samples", "7"}, 0},
	} {
		g, _ := testOptions(t, nil)
		cfg, err := parsedWatchOptions(t, tc.args).streamConfig(g)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Samples != tc.want {
			t.Errorf("%v: Samples = %d, want %d", tc.args, cfg.Samples, tc.want)
		}
	}
	// A bad --samples is still refused headless.
	g, _ := testOptions(t, nil)
	if _, err := parsedWatchOptions(t, []string{"-t", "e", "--no-tui", "--samples", "-1"}).streamConfig(g); err == nil || !strings.Contains(err.Error(), "invalid --samples -1") {
		t.Fatalf("err = %v, want invalid --samples", err)
	}
}
