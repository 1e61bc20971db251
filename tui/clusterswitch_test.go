package tui

import (
	"context"
	"errors"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestClusterSwitch(t *testing.T) {
	m := liveModel(t, 140, 40, stagingAndProd(nil))
	press(m, "c")
	if _, ok := m.top().(*clusterPicker); !ok {
		t.Fatalf("c opened %T", m.top())
	}
	mustContain(t, screen(m), "staging (current)", "prod-1:9092")
	press(m, "enter")
	mustContain(t, screen(m), "Close stream events and connect to cluster prod (prod-1:9092)?")
	press(m, "n")
	mustNotContain(t, screen(m), "Close stream")
	press(m, "enter")
	cmd := press(m, "y")
	if cmd == nil {
		t.Fatal("y did nothing")
	}
	switchesTo(t, m, cmd(), "prod")
}

// A profile whose cluster does not answer is said in the dialog and the
// stream goes on; one that answers is switched to.
func TestClusterSwitchProbesFirst(t *testing.T) {
	down := errors.New("dial tcp prod-1:9092: connection refused")
	var tried []string
	m := liveModel(t, 140, 40, stagingAndProd(func(_ context.Context, name string) error {
		tried = append(tried, name)
		return down
	}))
	press(m, "c", "enter")
	cmd := press(m, "y")
	if cmd == nil {
		t.Fatal("y did nothing")
	}
	mustContain(t, screen(m), "Connecting to cluster prod…", "esc cancels")
	msg := cmd()
	if _, ok := msg.(probeMsg); !ok {
		t.Fatalf("y sent %T, want the probe's answer", msg)
	}
	_, next := m.Update(msg)
	if next != nil {
		if isQuit(next) {
			t.Fatal("an unreachable profile ended the stream")
		}
		if _, ok := next().(switchMsg); ok {
			t.Fatal("an unreachable profile was switched to")
		}
	}
	if m.switchTo != "" || len(tried) != 1 || tried[0] != "prod" {
		t.Fatalf("switchTo %q, tried %v", m.switchTo, tried)
	}
	mustContain(t, screen(m), "cannot connect to cluster prod: dial tcp prod-1:9092: connection refused; the stream goes on here")

	// The same profile, now up.
	down = nil
	press(m, "enter")
	cmd = press(m, "y")
	_, next = m.Update(cmd())
	if next == nil {
		t.Fatal("a reachable profile: nothing happened")
	}
	switchesTo(t, m, next(), "prod")
}

// esc while a profile is tried goes back; the late answer changes nothing.
func TestClusterSwitchProbeCancelled(t *testing.T) {
	m := liveModel(t, 140, 40, stagingAndProd(func(context.Context, string) error { return nil }))
	press(m, "c", "enter")
	cmd := press(m, "y")
	press(m, "esc")
	mustNotContain(t, screen(m), "Connecting to cluster")
	_, next := m.Update(cmd())
	if next != nil {
		t.Errorf("the answer after esc still acted")
	}
	if m.switchTo != "" {
		t.Errorf("switchTo %q after esc", m.switchTo)
	}
}

func TestClusterSwitchWithoutProfiles(t *testing.T) {
	m := liveModel(t, 140, 40, Options{})
	press(m, "c")
	noViewOpen(t, m, "no [clusters.NAME] profile")
}

// stagingAndProd are the options of a stream on cluster staging with a
// second profile, prod, that probe tries before a switch (nil: none).
func stagingAndProd(probe func(context.Context, string) error) Options {
	return Options{Cluster: "staging", Profiles: []Profile{
		{Name: "prod", Brokers: []string{"prod-1:9092"}}, {Name: "staging", Brokers: []string{"st-1:9092"}}},
		ProbeProfile: probe}
}

// switchesTo checks that m, given msg, quits to connect to profile.
func switchesTo(t *testing.T, m *Model, msg tea.Msg, profile string) {
	t.Helper()
	_, quit := m.Update(msg)
	if !isQuit(quit) || m.switchTo != profile {
		t.Errorf("switch: quit %v, switchTo %q, want %q", isQuit(quit), m.switchTo, profile)
	}
}
