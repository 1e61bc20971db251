package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kbatch-dev/kbatch/offsets"
)

// GroupState is a consumer group as its coordinator describes it.
type GroupState struct {
	Name string
	// State is Empty, Stable, PreparingRebalance, CompletingRebalance or
	// Dead; "" for a group the coordinator does not know.
	State string
	// Members are the group's live consumers.
	Members []GroupMember
}

// Active reports whether the group has live consumers: members listed, or
// a state other than Empty while none are listed (a broker that lists a
// consumer group of Kafka 4's protocol, KIP-848, without its members and
// cannot be asked for them).
func (s GroupState) Active() bool {
	return len(s.Members) > 0 || (s.State != "" && s.State != "Empty")
}

// GroupMember is one live consumer of a group.
type GroupMember struct {
	ClientID string
	// Host is where the consumer runs, as the broker saw it ("/10.0.0.5").
	Host string
}

// GroupActiveError says a group has live members, so kbatch does not
// write its offsets: the members would go on from their own positions and
// commit over them, and a member's next commit is what the group would
// resume from. Kafka's own tools refuse the same (kafka-consumer-groups
// --reset-offsets: "can only be reset if the group is inactive").
type GroupActiveError struct {
	Group   string
	State   string
	Members []GroupMember
	// Refusal is the broker's error when it refused the commit while
	// DescribeGroups listed no member: one joined after the check, or the
	// group is a consumer group of Kafka 4's protocol (KIP-848), which a
	// 4.x broker does not describe ("not a classic group"); "" otherwise.
	Refusal string
}

func (e *GroupActiveError) Error() string {
	switch {
	case e.Refusal != "":
		return fmt.Sprintf("consumer group %q refused the commit (%s): it has live consumers (one that joined meanwhile, or of Kafka 4's protocol, "+
			"which DescribeGroups does not list); its offsets are written only while it is inactive; stop its consumers first", e.Group, e.Refusal)
	case len(e.Members) == 0:
		return fmt.Sprintf("consumer group %q is %s with members DescribeGroups does not list (a consumer group of Kafka 4's protocol, KIP-848): "+
			"its offsets are written only while it is inactive; stop its consumers first", e.Group, e.State)
	}
	hosts := []string{}
	for _, m := range e.Members {
		if !slices.Contains(hosts, m.Host) {
			hosts = append(hosts, m.Host)
		}
	}
	slices.Sort(hosts)
	where := ""
	if len(hosts) > 0 {
		where = " on " + offsets.JoinSome(len(hosts), 5, func(i int) string { return hosts[i] })
	}
	state := e.State
	if state == "" {
		state = "unknown"
	}
	return fmt.Sprintf("consumer group %q has %s%s (state %s): its offsets are written only while it is inactive; stop its consumers first",
		e.Group, countMembers(len(e.Members)), where, state)
}

// GroupPermissionError says the user lacks a permission (Kafka ACL) that
// reading or writing a group's offsets needs; its message names it.
// Asking again does not help until an operator grants it.
type GroupPermissionError struct {
	Msg string
	Err error // the broker's error: GROUP_ or TOPIC_AUTHORIZATION_FAILED
}

func (e *GroupPermissionError) Error() string { return e.Msg }
func (e *GroupPermissionError) Unwrap() error { return e.Err }

func countMembers(n int) string {
	if n == 1 {
		return "1 live member"
	}
	return fmt.Sprintf("%d live members", n)
}

// DescribeGroup asks group's coordinator for its state and members. It
// only reads: the group is never joined. DescribeGroups lists the members
// of a classic group only: a 4.x broker says a consumer group of Kafka 4's
// protocol (KIP-848) is not found, so when it names no member the group is
// also asked for with ConsumerGroupDescribe, where the brokers support it
// (ApiVersions), and its members are those of either answer.
func DescribeGroup(c *Client, group string) (GroupState, error) {
	if strings.TrimSpace(group) == "" {
		return GroupState{}, &offsets.UsageError{Msg: "empty consumer group name"}
	}
	var st GroupState
	err := retryGroup(c, group, func() (err error) {
		if st, err = describeGroup(c, group); err != nil || len(st.Members) > 0 || st.State == "Empty" {
			return err
		}
		g, ok, err := describeConsumerGroup(c, group)
		if err != nil || !ok {
			return err
		}
		st, err = withConsumerMembers(st, g)
		return err
	})
	return st, err
}

// describeConsumerGroup asks for group with ConsumerGroupDescribe (Kafka
// 4's consumer protocol, KIP-848); ok is false where the brokers do not
// know that request (ApiVersions).
func describeConsumerGroup(c *Client, group string) (g kmsg.ConsumerGroupDescribeResponseGroup, ok bool, err error) {
	kc, err := c.fetchClient()
	if err != nil {
		return g, false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.sc.Config().Net.ReadTimeout)
	defer cancel()
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, kc)
	if err == nil {
		err = kerr.ErrorForCode(versions.ErrorCode)
	}
	if err != nil {
		return g, false, fmt.Errorf("describing consumer group %q: api versions: %w", group, err)
	}
	known := false
	for _, k := range versions.ApiKeys {
		known = known || k.ApiKey == kmsg.ConsumerGroupDescribe.Int16()
	}
	if !known {
		return g, false, nil
	}
	req := kmsg.NewPtrConsumerGroupDescribeRequest()
	req.Groups = []string{group}
	resp, err := req.RequestWith(ctx, kc)
	if err != nil {
		return g, false, fmt.Errorf("describing consumer group %q: %w", group, err)
	}
	for _, rg := range resp.Groups {
		if rg.Group == group {
			return rg, true, nil
		}
	}
	return g, false, fmt.Errorf("describing consumer group %q: the coordinator's answer does not name it", group)
}

// withConsumerMembers is st, as DescribeGroups told it, with the state and
// members of g, ConsumerGroupDescribe's answer for the same group: a group
// it does not know (a classic group, or none), or a broker without the
// consumer protocol, leaves st as it is.
func withConsumerMembers(st GroupState, g kmsg.ConsumerGroupDescribeResponseGroup) (GroupState, error) {
	switch err := kerr.ErrorForCode(g.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.GroupIDNotFound):
		return st, nil
	case errors.Is(err, kerr.UnsupportedVersion):
		// Kafka 3.7 to 3.9 list the API but answer this when the
		// consumer protocol is not enabled: there are no such groups, and
		// DescribeGroups' answer is the whole truth.
		return st, nil
	case errors.Is(err, kerr.GroupAuthorizationFailed):
		return st, describeDenied(st.Name, err)
	case errors.Is(err, kerr.NotCoordinator), errors.Is(err, kerr.CoordinatorNotAvailable), errors.Is(err, kerr.CoordinatorLoadInProgress):
		// The same trouble as DescribeGroups' own: retried (retryGroup).
		return st, fmt.Errorf("describing consumer group %q: %w", st.Name, sarama.ErrNotCoordinatorForConsumer)
	default:
		return st, fmt.Errorf("describing consumer group %q: %w", st.Name, err)
	}
	if g.State != "" && g.State != "Dead" {
		st.State = g.State
	}
	for _, m := range g.Members {
		st.Members = append(st.Members, GroupMember{ClientID: m.ClientID, Host: m.ClientHost})
	}
	sortMembers(st.Members)
	return st, nil
}

// retryGroup runs try until it succeeds, fails for good, or about 8s of
// coordinator trouble (a move, offsets loading, NOT_COORDINATOR while a
// fresh cluster creates __consumer_offsets on its first group request)
// have passed.
func retryGroup(c *Client, group string, try func() error) error {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		if attempt > 0 {
			_ = c.sc.RefreshCoordinator(group)
			time.Sleep(min(time.Duration(attempt)*250*time.Millisecond, time.Second))
		}
		if err = try(); err == nil || !retriableGroupError(err) {
			return err
		}
	}
	return err
}

func describeGroup(c *Client, group string) (GroupState, error) {
	coord, err := c.sc.Coordinator(group)
	if err != nil {
		return GroupState{}, fmt.Errorf("coordinator of consumer group %q: %w", group, err)
	}
	req := &sarama.DescribeGroupsRequest{Groups: []string{group}}
	switch v := c.sc.Config().Version; {
	case v.IsAtLeast(sarama.V2_4_0_0):
		req.Version = 5
	case v.IsAtLeast(sarama.V2_3_0_0):
		req.Version = 3
	case v.IsAtLeast(sarama.V2_0_0_0):
		req.Version = 2
	case v.IsAtLeast(sarama.V1_1_0_0):
		req.Version = 1
	}
	resp, err := coord.DescribeGroups(req)
	if err != nil {
		_ = coord.Close()
		return GroupState{}, fmt.Errorf("describing consumer group %q on broker %s: %w", group, coord.Addr(), err)
	}
	st := GroupState{Name: group}
	for _, d := range resp.Groups {
		if d == nil || d.GroupId != group {
			continue
		}
		switch {
		case errors.Is(d.Err, sarama.ErrGroupIDNotFound):
			return st, nil
		case errors.Is(d.Err, sarama.ErrGroupAuthorizationFailed):
			return st, describeDenied(group, d.Err)
		case !errors.Is(d.Err, sarama.ErrNoError):
			return st, fmt.Errorf("describing consumer group %q: %w", group, d.Err)
		}
		if d.State != "Dead" {
			st.State = d.State
		}
		for _, m := range d.Members {
			st.Members = append(st.Members, GroupMember{ClientID: m.ClientId, Host: m.ClientHost})
		}
		sortMembers(st.Members)
	}
	return st, nil
}

// CommitGroupOffsets writes next (next offsets, Kafka's commit
// convention) as group's committed offsets, the way an admin tool does:
// an OffsetCommit with generation -1 and no member id, so kbatch never
// joins the group. Partitions next does not name keep their commits.
//
// A group with live members is refused with a *GroupActiveError, twice
// over: DescribeGroups is asked first (GroupState.Active), and a member that joins in between
// makes the broker refuse the commit itself (UNKNOWN_MEMBER_ID,
// ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS), which is reported the same
// way. So a live group is never moved. The commit is all or nothing from
// the caller's side: any partition refused makes it an error naming the
// first one (the others may have been written; writing the same offsets
// again is harmless). Missing permissions (READ on the group and on the
// topics) are named in the error. Coordinator moves are retried.
func CommitGroupOffsets(c *Client, group string, next map[offsets.Partition]int64) error {
	st, err := DescribeGroup(c, group)
	if err != nil {
		return err
	}
	if st.Active() {
		return &GroupActiveError{Group: group, State: st.State, Members: st.Members}
	}
	return commitGroup(c, group, next)
}

// commitGroup is CommitGroupOffsets after its check of the members.
func commitGroup(c *Client, group string, next map[offsets.Partition]int64) error {
	if len(next) == 0 {
		return nil
	}
	lastErr := retryGroup(c, group, func() error { return sendGroupCommit(c, group, next) })
	var active *GroupActiveError
	if errors.As(lastErr, &active) {
		// The broker saw members: name them, as the check before does.
		if st, err := DescribeGroup(c, group); err == nil && len(st.Members) > 0 {
			active.State, active.Members, active.Refusal = st.State, st.Members, ""
		}
	}
	return lastErr
}

func sendGroupCommit(c *Client, group string, next map[offsets.Partition]int64) error {
	coord, err := c.sc.Coordinator(group)
	if err != nil {
		return fmt.Errorf("coordinator of consumer group %q: %w", group, err)
	}
	req := sarama.NewOffsetCommitRequest(c.sc.Config(), group)
	req.ConsumerGroupGeneration = sarama.GroupGenerationUndefined
	req.ConsumerID = ""
	for p, off := range next {
		req.AddBlockWithLeaderEpoch(p.Topic, p.Partition, off, -1, 0, "")
	}
	resp, err := coord.CommitOffset(req)
	if err != nil {
		_ = coord.Close()
		return fmt.Errorf("committing offsets of consumer group %q on broker %s: %w", group, coord.Addr(), err)
	}
	for _, p := range offsets.SortedPartitions(next) {
		kerr, ok := resp.Errors[p.Topic][p.Partition]
		if !ok {
			return fmt.Errorf("committing offsets of consumer group %q: broker %s did not answer for %s", group, coord.Addr(), p)
		}
		if errors.Is(kerr, sarama.ErrNoError) {
			continue
		}
		return groupCommitError(group, p, kerr)
	}
	return nil
}

// describeDenied is the error of a describe the broker refused for want
// of DESCRIBE on group.
func describeDenied(group string, err error) error {
	return &GroupPermissionError{Err: err, Msg: fmt.Sprintf("not authorized to describe consumer group %q: the user needs DESCRIBE on the group (Kafka ACL): %v", group, err)}
}

// groupCommitError turns a partition's OffsetCommit error into one line
// that says what to do.
func groupCommitError(group string, p offsets.Partition, kerr sarama.KError) error {
	switch {
	case errors.Is(kerr, sarama.ErrGroupAuthorizationFailed):
		return &GroupPermissionError{Err: kerr, Msg: fmt.Sprintf("not authorized to commit offsets of consumer group %q (GROUP_AUTHORIZATION_FAILED): the user needs READ on the group (Kafka ACL)", group)}
	case errors.Is(kerr, sarama.ErrTopicAuthorizationFailed):
		return &GroupPermissionError{Err: kerr, Msg: fmt.Sprintf("not authorized to commit offsets of consumer group %q on topic %s (TOPIC_AUTHORIZATION_FAILED): the user needs READ on the topic (Kafka ACL)", group, offsets.QuoteName(p.Topic))}
	case errors.Is(kerr, sarama.ErrUnknownMemberId), errors.Is(kerr, sarama.ErrIllegalGeneration),
		errors.Is(kerr, sarama.ErrRebalanceInProgress), errors.Is(kerr, sarama.ErrFencedInstancedId):
		return &GroupActiveError{Group: group, Refusal: kerr.Error()}
	case errors.Is(kerr, sarama.ErrUnknownTopicOrPartition):
		return fmt.Errorf("committing offsets of consumer group %q: %s does not exist on this cluster", group, p)
	}
	return fmt.Errorf("committing offsets of consumer group %q on %s: %w", group, p, kerr)
}

// GroupWriter commits a stream's acked next offsets to one consumer
// group (watch --commit-group): it is what the consumer package's
// GroupCommitter asks for. Each commit is a CommitGroupOffsets, so a group
// with live members is never moved. Safe for one caller at a time.
type GroupWriter struct {
	c     *Client
	group string
}

// NewGroupWriter returns a GroupWriter for group on c; c must outlive it.
func NewGroupWriter(c *Client, group string) *GroupWriter {
	return &GroupWriter{c: c, group: group}
}

// Group is the group's name.
func (w *GroupWriter) Group() string { return w.group }

// CommitGroup writes next as the group's committed offsets
// (CommitGroupOffsets): an error wrapping *GroupActiveError means the
// group has live members, one wrapping *GroupPermissionError a missing
// permission.
func (w *GroupWriter) CommitGroup(next map[offsets.Partition]int64) error {
	return CommitGroupOffsets(w.c, w.group, next)
}

// sortMembers orders a group's members by host, then client id, the order
// every description of a group lists them in.
func sortMembers(ms []GroupMember) {
	slices.SortFunc(ms, func(a, b GroupMember) int {
		return strings.Compare(a.Host+"\x00"+a.ClientID, b.Host+"\x00"+b.ClientID)
	})
}
