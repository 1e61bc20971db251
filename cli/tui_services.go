package cli

import (
	"context"
	"sort"
	"sync"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/tui"
)

// screenWriter produces the screen's p and E records through a
// kafka.Writer dialled on first use (a session that never writes opens no
// producer connection); Close closes it.
type screenWriter struct {
	cc kafka.ClientConfig
	mu sync.Mutex
	w  *kafka.Writer
}

func (s *screenWriter) Write(_ context.Context, r tui.WriteRequest) (tui.WriteResult, error) {
	s.mu.Lock()
	if s.w == nil {
		w, err := kafka.DialWriter(s.cc)
		if err != nil {
			s.mu.Unlock()
			return tui.WriteResult{}, err
		}
		s.w = w
	}
	w := s.w
	s.mu.Unlock()
	hs := make([]record.Header, len(r.Headers))
	copy(hs, r.Headers)
	res, err := w.Write(kafka.WriteRequest{Topic: r.Topic, Partition: r.Partition, Key: r.Key, Value: r.Value, Headers: hs})
	return tui.WriteResult{Partition: res.Partition, Offset: res.Offset}, err
}

func (s *screenWriter) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w != nil {
		_ = s.w.Close()
		s.w = nil
	}
}

// groupReader reads consumer groups for the screen's C with the stream's
// client (only ListGroups, OffsetFetch and DescribeGroups: never a join).
type groupReader struct{ client *kafka.Client }

func (g groupReader) TopicGroups(_ context.Context, parts []offsets.Partition) ([]tui.ConsumerGroup, int, error) {
	groups, total, err := kafka.TopicGroups(g.client, parts)
	if err != nil {
		return nil, 0, err
	}
	out := make([]tui.ConsumerGroup, len(groups))
	for i, gr := range groups {
		out[i] = tui.ConsumerGroup{Name: gr.Name, State: gr.State, Members: gr.Members, Offsets: gr.Offsets, Err: gr.Err}
	}
	return out, total, nil
}

// screenProfiles lists the config's cluster profiles for the screen's c,
// by name; none when the config cannot be read (the start already said
// why).
func (g *globalOptions) screenProfiles() []tui.Profile {
	cfg, err := g.config()
	if err != nil || cfg == nil {
		return nil
	}
	out := make([]tui.Profile, 0, len(cfg.Clusters))
	for name, c := range cfg.Clusters {
		out = append(out, tui.Profile{Name: name, Brokers: c.Brokers})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
