package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// Profile is a [clusters.NAME] of the config, for c.
type Profile struct {
	Name    string
	Brokers []string
}

// SwitchCluster is what Run returns when the user chose another cluster
// profile with c: the stream is closed (positions stored, store closed by
// the caller as on quit); the caller connects to Profile and shows the
// topic picker.
type SwitchCluster struct{ Profile string }

func (s *SwitchCluster) Error() string { return "switch to cluster profile " + s.Profile }

// ErrProbeSkipped is what Options.ProbeProfile returns for a profile it
// cannot try from behind the screen; the switch goes ahead.
var ErrProbeSkipped = errors.New("the profile cannot be tried from the screen")

// clusterPicker is c: the config's profiles; enter asks to confirm, y
// closes the stream and switches.
type clusterPicker struct {
	*common
	profiles   []Profile
	current    string
	stream     string
	cur        cursor
	confirming bool
	width      int
	// probe tries a profile before the switch (Options.ProbeProfile);
	// probing is the profile being tried, failed why the last try failed.
	probe   func(ctx context.Context, profile string) error
	probing string
	failed  string
}

// probeMsg is the answer of a ProbeProfile call.
type probeMsg struct {
	profile string
	err     error
}

// probeTimeout bounds a profile's trial connection.
const probeTimeout = 15 * time.Second

// probed takes a trial connection's answer: the switch goes ahead, or the
// dialog says why it cannot and the stream goes on.
func (v *clusterPicker) probed(msg probeMsg) tea.Cmd {
	if msg.profile != v.probing {
		return nil // cancelled with esc meanwhile
	}
	v.probing = ""
	if msg.err != nil && !errors.Is(msg.err, ErrProbeSkipped) {
		v.confirming = false
		v.failed = fmt.Sprintf("cannot connect to cluster %s: %v; the stream goes on here", msg.profile, msg.err)
		return nil
	}
	sw := switchMsg{profile: msg.profile}
	return func() tea.Msg { return sw }
}

func (v *clusterPicker) SetSize(w, h int) {
	v.width = w
	v.cur.setHeight(max(1, min(h-4, 12)))
}
func (v *clusterPicker) capturing() bool { return true }
func (v *clusterPicker) dialog() bool    { return true }
func (v *clusterPicker) title() string   { return "Switch cluster" }

// switchMsg asks the root to close the stream and switch to profile.
type switchMsg struct{ profile string }

func (v *clusterPicker) Update(msg tea.Msg) tea.Cmd {
	ks, ok := pressedKey(msg)
	if !ok {
		return nil
	}
	if v.probing != "" {
		if ks == "esc" || ks == "n" {
			v.probing, v.confirming = "", false
		}
		return nil
	}
	if v.confirming {
		switch ks {
		case "y":
			name := v.profiles[v.cur.sel].Name
			if v.probe == nil {
				sw := switchMsg{profile: name}
				return func() tea.Msg { return sw }
			}
			v.probing, v.failed = name, ""
			probe := v.probe
			return func() tea.Msg {
				ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
				defer cancel()
				return probeMsg{profile: name, err: probe(ctx, name)}
			}
		case "n", "esc":
			v.confirming = false
		}
		return nil
	}
	switch {
	case ks == "esc" || ks == "q":
		return closeView
	case ks == "enter":
		if v.profiles[v.cur.sel].Name != v.current {
			v.confirming = true
		}
	default:
		v.navKeys(ks, &v.cur)
	}
	return nil
}

func (v *clusterPicker) View() string {
	th := &v.theme
	if v.probing != "" {
		return strings.Join([]string{
			wrap(fmt.Sprintf("Connecting to cluster %s…", krecord.String(v.probing)), v.width),
			"",
			wrap("The stream goes on until the cluster answers.", v.width),
			"",
			th.dim.Render("esc cancels"),
		}, "\n")
	}
	if v.confirming {
		p := v.profiles[v.cur.sel]
		return strings.Join([]string{
			th.warn.Render(wrap(fmt.Sprintf("Close stream %s and connect to cluster %s (%s)?", krecord.String(v.stream),
				krecord.String(p.Name), brokerList(p.Brokers, 60)), v.width)),
			"",
			wrap(v.switchText(), v.width),
			"",
			th.bold.Render("y switches") + th.dim.Render(" · n or esc goes back"),
		}, "\n")
	}
	lines := []string{th.dim.Render(wrap("The [clusters.NAME] profiles of the config file:", v.width))}
	if v.failed != "" {
		lines = append([]string{th.warn.Render(wrap(krecord.String(v.failed), v.width)), ""}, lines...)
	}
	from, until := v.cur.visible()
	for i := from; i < until; i++ {
		p := v.profiles[i]
		name := krecord.String(p.Name)
		if p.Name == v.current {
			name += " (current)"
		}
		line := fit(name, 24) + " " + brokerList(p.Brokers, max(10, v.width-30))
		lines = append(lines, markRow(th, line, i == v.cur.sel, true))
	}
	lines = append(lines, "", th.dim.Render("enter picks · esc cancels"))
	return strings.Join(lines, "\n")
}

// switchText says what y does.
func (v *clusterPicker) switchText() string {
	const stops = "stream stops as on quit: the batch being processed is acked, its positions stay in the store. " +
		"Then the topic picker lists the new cluster's topics."
	if v.probe == nil {
		return "The " + stops
	}
	return "kbatch first tries the cluster while the stream goes on; if it answers, the " + stops
}

func (v *clusterPicker) ShortHelp() []key.Binding {
	if v.probing != "" {
		return []key.Binding{v.keys.Back}
	}
	if v.confirming {
		return []key.Binding{
			key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "switch")),
			key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "back")),
		}
	}
	return []key.Binding{v.keys.Up, v.keys.Down,
		key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "pick")), v.keys.Back}
}
func (v *clusterPicker) FullHelp() [][]key.Binding { return [][]key.Binding{v.ShortHelp()} }

// openClusters is c.
func (m *Model) openClusters() {
	switch {
	case len(m.opts.Profiles) == 0:
		m.setStatus("no [clusters.NAME] profile in the config file to switch to (see config.example.toml)", m.c.theme.dim)
		return
	case m.controls == nil:
		m.setStatus(errReadOnly.Error(), m.c.theme.dim)
		return
	}
	v := &clusterPicker{common: m.c, profiles: m.opts.Profiles, current: m.opts.Cluster, stream: m.stream.name, probe: m.opts.ProbeProfile}
	v.cur.setLen(len(v.profiles))
	for i, p := range v.profiles {
		if p.Name == m.opts.Cluster {
			v.cur.sel = (i + 1) % len(v.profiles) // the next one, not where we are
		}
	}
	v.cur.clamp()
	m.pushView(v)
}
