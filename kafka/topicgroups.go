package kafka

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/offsets"
)

// TopicGroup is a consumer group that committed offsets on some of the
// partitions asked about.
type TopicGroup struct {
	Name string
	// State is the group's state as the coordinator describes it (Stable,
	// Empty, PreparingRebalance…); "" when it could not be described.
	State string
	// Members is how many consumers are in the group now.
	Members int
	// Offsets are the committed next offsets of the partitions asked
	// about; partitions without a commit are left out.
	Offsets map[offsets.Partition]int64
	// Err is why this group's offsets could not be read (a missing
	// DESCRIBE permission on the group); Offsets is then empty.
	Err error
}

// MaxTopicGroups bounds how many groups TopicGroups reads the offsets
// of, so a cluster with thousands of groups costs a bounded number of
// requests per refresh.
const MaxTopicGroups = 500

// TopicGroups lists the consumer groups that committed offsets on any of
// parts, with those offsets, sorted by name, and how many groups the
// cluster has (those beyond MaxTopicGroups were not looked at). The
// groups are only read (ListGroups, OffsetFetch, DescribeGroups): kbatch
// never joins one. A user who may not list groups gets an error that
// says which permission is missing.
func TopicGroups(c *Client, parts []offsets.Partition) ([]TopicGroup, int, error) {
	names, err := listGroups(c)
	if err != nil {
		return nil, 0, err
	}
	total := len(names)
	if len(names) > MaxTopicGroups {
		names = names[:MaxTopicGroups]
	}
	byTopic := map[string][]int32{}
	for _, p := range parts {
		byTopic[p.Topic] = append(byTopic[p.Topic], p.Partition)
	}
	out := make([]TopicGroup, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = readTopicGroup(c, name, byTopic)
		}()
	}
	wg.Wait()
	kept := out[:0]
	for _, g := range out {
		if len(g.Offsets) > 0 || g.Err != nil {
			kept = append(kept, g)
		}
	}
	return kept, total, nil
}

// listGroups asks every broker for the groups it coordinates.
func listGroups(c *Client) ([]string, error) {
	conf := c.sc.Config()
	brokers := c.sc.Brokers()
	type answer struct {
		groups map[string]string
		err    error
	}
	answers := make([]answer, len(brokers))
	var wg sync.WaitGroup
	for i, b := range brokers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = b.Open(conf) // a no-op when connected
			resp, err := b.ListGroups(&sarama.ListGroupsRequest{})
			if err == nil && !errors.Is(resp.Err, sarama.ErrNoError) {
				err = resp.Err
			}
			if err != nil {
				answers[i].err = err
				return
			}
			answers[i].groups = resp.Groups
		}()
	}
	wg.Wait()
	var names []string
	var firstErr error
	answered := 0
	for _, a := range answers {
		if a.err != nil {
			if firstErr == nil || errors.Is(a.err, sarama.ErrClusterAuthorizationFailed) {
				firstErr = a.err
			}
			continue
		}
		answered++
		for name, protocol := range a.groups {
			if protocol == "consumer" || protocol == "" {
				names = append(names, name)
			}
		}
	}
	if errors.Is(firstErr, sarama.ErrClusterAuthorizationFailed) {
		return nil, errors.New("not authorized to list consumer groups: the user needs DESCRIBE on the cluster or on the groups (Kafka ACL)")
	}
	if answered == 0 && firstErr != nil {
		return nil, fmt.Errorf("listing consumer groups: %v", firstErr)
	}
	sort.Strings(names)
	return names, nil
}

// readTopicGroup reads group's committed offsets of byTopic's partitions
// and, when it has some, its state.
func readTopicGroup(c *Client, name string, byTopic map[string][]int32) TopicGroup {
	g := TopicGroup{Name: name}
	coord, err := c.sc.Coordinator(name)
	if err != nil {
		g.Err = groupError(name, err)
		return g
	}
	resp, err := coord.FetchOffset(sarama.NewOffsetFetchRequest(c.sc.Config().Version, name, byTopic))
	if err == nil {
		err = resp.GroupError()
		if errors.Is(err, sarama.ErrNoError) {
			err = nil
		}
	}
	if errors.Is(err, sarama.ErrGroupIDNotFound) {
		return g
	}
	if err != nil {
		g.Err = groupError(name, err)
		return g
	}
	blocks := resp.Blocks
	if resp.Version >= 8 {
		blocks = nil
		if gr := resp.GetGroup(name); gr != nil {
			blocks = gr.Blocks
		}
	}
	for topic, ps := range blocks {
		for partition, blk := range ps {
			if blk == nil {
				continue
			}
			if !errors.Is(blk.Err, sarama.ErrNoError) {
				g.Err = groupError(name, blk.Err)
				continue
			}
			if blk.Offset < 0 {
				continue
			}
			if g.Offsets == nil {
				g.Offsets = map[offsets.Partition]int64{}
			}
			g.Offsets[offsets.Partition{Topic: topic, Partition: partition}] = blk.Offset
		}
	}
	if len(g.Offsets) == 0 {
		return g
	}
	if d, err := coord.DescribeGroups(&sarama.DescribeGroupsRequest{Groups: []string{name}}); err == nil && len(d.Groups) == 1 {
		if dg := d.Groups[0]; errors.Is(dg.Err, sarama.ErrNoError) {
			g.State, g.Members = dg.State, len(dg.Members)
		}
	}
	return g
}

func groupError(name string, err error) error {
	switch {
	case errors.Is(err, sarama.ErrGroupAuthorizationFailed):
		return fmt.Errorf("not authorized to read group %q: the user needs DESCRIBE on it (Kafka ACL)", name)
	case errors.Is(err, sarama.ErrTopicAuthorizationFailed):
		return fmt.Errorf("not authorized to read the offsets of group %q on these topics: the user needs DESCRIBE on them", name)
	}
	return fmt.Errorf("group %q: %v", name, err)
}
