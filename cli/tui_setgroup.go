package cli

import (
	"context"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/tui"
)

// groupSetter plans and writes a consumer group's offsets for the
// screen's O with the stream's client, as offsets export --to-group does
// (DescribeGroups, OffsetFetch, OffsetCommit with generation -1: never a
// join). The calls are not cancelled by ctx; sarama's timeouts bound them.
type groupSetter struct{ client *kafka.Client }

func (g groupSetter) PlanGroup(_ context.Context, group string, next map[offsets.Partition]int64) (tui.GroupPlan, error) {
	state, err := kafka.DescribeGroup(g.client, group)
	if err != nil {
		return tui.GroupPlan{}, err
	}
	plan := tui.GroupPlan{State: state.State, Members: len(state.Members)}
	if state.Active() {
		plan.Refusal = (&kafka.GroupActiveError{Group: group, State: state.State, Members: state.Members}).Error()
	}
	committed, err := kafka.GroupOffsets(g.client, group)
	if err != nil {
		return tui.GroupPlan{}, err
	}
	plan.Moves = offsets.GroupPlan(committed, next)
	return plan, nil
}

func (g groupSetter) SetGroup(_ context.Context, group string, next map[offsets.Partition]int64) error {
	return kafka.CommitGroupOffsets(g.client, group, next)
}
