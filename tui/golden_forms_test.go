package tui

import (
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/kbatch-dev/kbatch/offsets"
)

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

// Golden screens of the produce form, the palette, the cluster switch, the
// groups view and the partitions sorted by lag; go test ./tui -run Golden
// -update rewrites them.
func TestGoldenProducePaletteClustersGroups(t *testing.T) {
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
				s = runEventsUntil(t, tt.w, tt.h, o, goldenEvents(), tt.until, tt.keys...)
			}
			golden.RequireEqual(t, []byte(s))
		})
	}
}
