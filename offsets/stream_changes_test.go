package offsets

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestStreamChanges(t *testing.T) {
	prev := StreamInfo{Name: "events", ClusterID: "prod-1", Topics: []string{"a", "b"}}
	for _, tc := range []struct {
		name    string
		cluster string
		topics  []string
		want    []string
	}{
		{"same", "prod-1", []string{"b", "a"}, nil},
		{"cluster unknown now", "", []string{"a", "b"}, nil},
		{"other cluster", "staging-2", []string{"a", "b"}, []string{`cluster id "prod-1" → "staging-2"`}},
		{"other topics", "prod-1", []string{"a", "c"}, []string{"topics a,b → a,c"}},
		{"both", "x", []string{"a"}, []string{`cluster id "prod-1" → "x"`, "topics a,b → a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StreamChanges(prev, tc.cluster, tc.topics); !slices.Equal(got, tc.want) {
				t.Errorf("StreamChanges = %q, want %q", got, tc.want)
			}
		})
	}
	if got := StreamChanges(StreamInfo{Topics: []string{"a"}}, "new", []string{"a"}); got != nil {
		t.Errorf("a stream stored without a cluster id adopts one: got %q", got)
	}
	if got := StreamChanges(StreamInfo{ClusterID: "c"}, "c", []string{"a"}); got != nil {
		t.Errorf("a stream stored without topics adopts the run's: got %q", got)
	}
}

func TestEnsureStreamOnRecordsCluster(t *testing.T) {
	path := filepath.Join(t.TempDir(), "offsets.db")
	checkFile(t, path)
	s := mustOpen(t, path)
	defer s.Close()
	must(t, s.EnsureStreamOn("events", "prod-1", []string{"k:9092"}, []string{"events"}, nil))
	must(t, s.EnsureStream("events", []string{"k:9092"}, []string{"events"}))
	info, _, err := s.Stream("events")
	if err != nil {
		t.Fatal(err)
	}
	if info.ClusterID != "prod-1" {
		t.Errorf("cluster id %q, want prod-1 kept by EnsureStream", info.ClusterID)
	}
}
