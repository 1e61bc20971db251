package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

func newTopicsCommand(g *globalOptions) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "topics [TOPIC...]",
		Short: "List topics with their partitions, offsets, replicas, leader, cleanup policy and retention",
		Long: `topics lists the cluster's topics (or the named ones), one line per
partition: the partition count, the log start offset, the high watermark,
the replica brokers and those in sync (ISR), the leader broker, and the
topic's cleanup.policy and retention (retention.ms, and retention.bytes
when set): a compacted topic has offsets that hold no record, retention
moves the log start. Offsets are asked for with one ListOffsets request
per broker and the settings with one DescribeConfigs request, so it stays
quick on big clusters.

Internal topics (names starting with "__") are left out unless --all or
named.`,
		Example: `  kbatch topics -b localhost:9092
  kbatch topics --cluster prod events orders
  kbatch topics --json | jq '.[] | {topic, partition_count}'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopics(g, args, all, asJSON, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON array instead of a table")
	cmd.Flags().BoolVar(&all, "all", false, "include internal topics (names starting with \"__\")")
	return cmd
}

// topicInfo is one topic of `kbatch topics --json`.
type topicInfo struct {
	Topic          string `json:"topic"`
	PartitionCount int    `json:"partition_count"`
	// CleanupPolicy, RetentionMs and RetentionBytes are the topic's
	// cleanup.policy, retention.ms and retention.bytes (-1: no limit);
	// absent when the cluster did not say (no DESCRIBE_CONFIGS right).
	CleanupPolicy  string          `json:"cleanup_policy,omitempty"`
	RetentionMs    *int64          `json:"retention_ms,omitempty"`
	RetentionBytes *int64          `json:"retention_bytes,omitempty"`
	Partitions     []partitionInfo `json:"partitions"`
}

// partitionInfo is one partition of a topicInfo. Leader is -1 (and
// LeaderAddr empty) when the partition has no leader right now.
type partitionInfo struct {
	Partition     int32  `json:"partition"`
	LogStart      int64  `json:"log_start"`
	HighWatermark int64  `json:"high_watermark"`
	Leader        int32  `json:"leader"`
	LeaderAddr    string `json:"leader_addr,omitempty"`
	// Replicas are the replica brokers' ids, ISR those in sync.
	Replicas []int32 `json:"replicas"`
	ISR      []int32 `json:"isr"`
}

func runTopics(g *globalOptions, names []string, all, asJSON bool, stdout io.Writer) error {
	client, _, err := g.dial()
	if err != nil {
		return err
	}
	defer client.Close()
	topics, err := selectTopics(client, names, all)
	if err != nil {
		return err
	}
	parts, err := kafka.TopicPartitions(client, topics)
	if err != nil {
		return err
	}
	bounds, err := kafka.ListBounds(client, parts)
	if len(names) == 0 {
		// Listing every topic: one deleted meanwhile is no longer one
		// of them. A named one is an error.
		parts, err = kafka.DropGone(parts, err)
	}
	if err != nil {
		return err
	}
	infos := collectTopics(client, parts, bounds)
	// Settings are extra: a user without the DESCRIBE_CONFIGS right still
	// gets the offsets, and stderr says what is missing.
	settings, serr := kafka.ListTopicSettings(client, topics)
	if serr != nil {
		g.warn("cleanup.policy and retention not shown for some topics: " + serr.Error())
	}
	for i := range infos {
		if s, ok := settings[infos[i].Topic]; ok {
			infos[i].CleanupPolicy, infos[i].RetentionMs, infos[i].RetentionBytes = s.CleanupPolicy, &s.RetentionMs, &s.RetentionBytes
		}
	}
	if asJSON {
		if infos == nil {
			infos = []topicInfo{}
		}
		b, err := json.Marshal(infos)
		if err != nil {
			return err
		}
		_, err = stdout.Write(append(record.SafeJSON(b), '\n'))
		return writeErr(err)
	}
	return writeErr(writeTopicsTable(stdout, infos))
}

func writeErr(err error) error {
	if err != nil {
		return fmt.Errorf("writing to stdout: %w", err)
	}
	return nil
}

// selectTopics returns the named topics (each must exist), or every topic
// of the cluster, internal ones only with all; sorted.
func selectTopics(client *kafka.Client, names []string, all bool) ([]string, error) {
	have, err := client.Topics()
	if err != nil {
		return nil, fmt.Errorf("listing topics: %w", err)
	}
	if len(names) == 0 {
		var out []string
		for _, t := range have {
			if all || !strings.HasPrefix(t, "__") {
				out = append(out, t)
			}
		}
		slices.Sort(out)
		return out, nil
	}
	out := dedupe(names)
	for _, t := range out {
		if !slices.Contains(have, t) {
			return nil, fmt.Errorf("%w: %q does not exist on this cluster (kbatch topics lists them)", kafka.ErrUnknownTopic, t)
		}
	}
	slices.Sort(out)
	return out, nil
}

// collectTopics groups partitions by topic, with bounds and leaders.
func collectTopics(client *kafka.Client, parts []offsets.Partition, bounds map[offsets.Partition]offsets.Bounds) []topicInfo {
	var out []topicInfo
	for _, p := range parts { // sorted by topic, then partition
		if len(out) == 0 || out[len(out)-1].Topic != p.Topic {
			out = append(out, topicInfo{Topic: p.Topic})
		}
		b := bounds[p]
		pi := partitionInfo{Partition: p.Partition, LogStart: b.LogStart, HighWatermark: b.HighWatermark, Leader: -1}
		if leader, err := client.Leader(p); err == nil {
			pi.Leader, pi.LeaderAddr = leader.ID, leader.Addr
		}
		pi.Replicas, pi.ISR, _ = client.Replicas(p)
		if pi.Replicas == nil {
			pi.Replicas = []int32{}
		}
		if pi.ISR == nil {
			pi.ISR = []int32{}
		}
		t := &out[len(out)-1]
		t.Partitions = append(t.Partitions, pi)
		t.PartitionCount = len(t.Partitions)
	}
	return out
}

// writeTopicsTable prints one line per partition, so the output greps
// well; broker addresses come from the cluster and are escaped.
func writeTopicsTable(w io.Writer, infos []topicInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tPARTITION\tLOG START\tHIGH WATERMARK\tCLEANUP\tRETENTION\tREPLICAS\tISR\tLEADER")
	for _, t := range infos {
		cleanup, retention := "?", "?"
		if t.CleanupPolicy != "" {
			cleanup = record.String(t.CleanupPolicy)
		}
		if t.RetentionMs != nil && t.RetentionBytes != nil {
			retention = retentionText(*t.RetentionMs, *t.RetentionBytes)
		}
		for _, p := range t.Partitions {
			leader := "none"
			if p.Leader >= 0 {
				leader = strconv.Itoa(int(p.Leader)) + " " + record.String(p.LeaderAddr)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", record.String(t.Topic), t.PartitionCount, p.Partition,
				p.LogStart, p.HighWatermark, cleanup, retention, brokerList(p.Replicas), brokerList(p.ISR), leader)
		}
	}
	return tw.Flush()
}

// retentionText is retention.ms and retention.bytes in one cell: "7d",
// "36h", "forever", "7d/1GiB" (whichever limit comes first).
func retentionText(ms, bytes int64) string {
	s := "forever"
	switch {
	case ms >= 0 && ms%(24*3600*1000) == 0 && ms > 0:
		s = strconv.FormatInt(ms/(24*3600*1000), 10) + "d"
	case ms >= 0 && ms%(3600*1000) == 0 && ms > 0:
		s = strconv.FormatInt(ms/(3600*1000), 10) + "h"
	case ms >= 0:
		s = (time.Duration(ms) * time.Millisecond).String()
	}
	if bytes >= 0 {
		s += "/" + strings.ReplaceAll(record.FormatSize(bytes), " ", "")
	}
	return s
}

// brokerList is broker ids as "1,2,3", "-" for none.
func brokerList(ids []int32) string {
	if len(ids) == 0 {
		return "-"
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(int(id))
	}
	return strings.Join(s, ",")
}
