package offsets

import (
	"fmt"
	"slices"
	"strings"
)

// StreamChanges says how a stored stream differs from a run about to use
// it: another cluster (both ids known and different) or another set of
// topics (order does not matter). It returns nil when nothing changed. A
// stream whose cluster id was never recorded (an older store) or a cluster
// that does not tell its id is taken as the same cluster, and a stream
// stored without topics (an import) takes the run's.
//
// For prev {ClusterID: "prod-1", Topics: [a b]}, cluster "staging-2" and
// topics [a c] it returns
//
//	cluster id "prod-1" → "staging-2"
//	topics a,b → a,c
func StreamChanges(prev StreamInfo, clusterID string, topics []string) []string {
	var out []string
	if prev.ClusterID != "" && clusterID != "" && prev.ClusterID != clusterID {
		out = append(out, fmt.Sprintf("cluster id %q → %q", prev.ClusterID, clusterID))
	}
	was, now := sortedSet(prev.Topics), sortedSet(topics)
	if len(was) > 0 && !slices.Equal(was, now) {
		out = append(out, fmt.Sprintf("topics %s → %s", strings.Join(was, ","), strings.Join(now, ",")))
	}
	return out
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
