package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

func newTopicsCommand(g *globalOptions) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "topics [TOPIC...]",
		Short: "List topics with their partitions, log start, high watermark and leader",
		Long: `topics lists the cluster's topics (or the named ones), one line per
partition: the partition count, the log start offset, the high watermark
and the leader broker. Offsets are asked for with one ListOffsets request
per broker, so it stays quick on big clusters.

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
	Topic          string          `json:"topic"`
	PartitionCount int             `json:"partition_count"`
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
}

func runTopics(g *globalOptions, names []string, all, asJSON bool, stdout io.Writer) error {
	cc, err := g.clientConfig()
	if err != nil {
		return err
	}
	client, err := kafka.Dial(cc)
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
	fmt.Fprintln(tw, "TOPIC\tPARTITIONS\tPARTITION\tLOG START\tHIGH WATERMARK\tLEADER")
	for _, t := range infos {
		for _, p := range t.Partitions {
			leader := "none"
			if p.Leader >= 0 {
				leader = strconv.Itoa(int(p.Leader)) + " " + record.String(p.LeaderAddr)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", record.String(t.Topic), t.PartitionCount, p.Partition, p.LogStart, p.HighWatermark, leader)
		}
	}
	return tw.Flush()
}
