package testkafka

import (
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kbatch-dev/kbatch/offsets"
)

// GroupOffsets reads group's committed offsets with franz-go, a client
// kbatch's sarama code did not write; partitions with no commit are left
// out.
func (c *Cluster) GroupOffsets(group string) map[offsets.Partition]int64 {
	c.t.Helper()
	resp, err := c.admin.FetchOffsets(ctx(c.t), group)
	if err != nil {
		c.t.Fatalf("committed offsets of group %s: %v", group, err)
	}
	out := map[offsets.Partition]int64{}
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			out[offsets.Partition{Topic: o.Topic, Partition: o.Partition}] = o.At
		}
	})
	return out
}
