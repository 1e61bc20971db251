package cli

import (
	"fmt"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// showOffsetsBatch prints one batch: in detail, as JSON, or as the Spark
// option pair that reads exactly its ranges.
func showOffsetsBatch(cmd *cobra.Command, g *globalOptions, o *offsetsShowOptions, st *offsets.Store, info offsets.StreamInfo, format string) error {
	b, ok, err := st.Batch(info.Name, o.batch)
	if err != nil {
		return err
	}
	if !ok {
		return usagef("stream %s has no batch %d in its log%s", offsets.QuoteName(info.Name), o.batch, offsetsBatchSpan(st, info.Name))
	}
	out := cmd.OutOrStdout()
	switch format {
	case "json":
		j := offsetsBatchToJSON(b)
		j.Stream = info.Name
		return offsetsWriteJSON(out, j)
	case "spark":
		return showOffsetsBatchSpark(cmd, g, o, st, info, b)
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "stream %s batch %d: %s, %s, %d records, %d bytes\n", offsets.SafeName(info.Name), b.ID,
		offsetsBatchState(b), offsetsTime(b.Time), b.Records, b.Bytes)
	fmt.Fprintln(w, "  PARTITION\tFROM\tUNTIL\tSPAN\tRECORDS\tBYTES\tJUMP")
	for _, r := range b.Ranges {
		jump := r.Jump
		if jump == "" {
			jump = "-"
		}
		fmt.Fprintf(w, "  %s\t%d\t%d\t%d\t%d\t%d\t%s\n", offsets.SafeName(r.Partition.String()), r.From, r.Until, r.Span(), r.Records, r.Bytes, offsets.SafeName(jump))
	}
	return w.Flush()
}

// offsetsBatchSpan describes the batch ids a stream's log holds, for
// messages: " (it holds batches 3–12)".
func offsetsBatchSpan(st *offsets.Store, stream string) string {
	log, err := st.Batches(stream, 0)
	if err != nil || len(log) == 0 {
		return " (its log is empty)"
	}
	newest, oldest := log[0].ID, log[len(log)-1].ID
	if newest == oldest {
		return " (it holds batch " + strconv.FormatUint(newest, 10) + ")"
	}
	return fmt.Sprintf(" (it holds batches %d–%d)", oldest, newest)
}

// showOffsetsBatchSpark prints startingOffsets and endingOffsets for a
// Spark batch query that reads exactly batch b (offsets.BatchSpan). Spark
// wants every partition of the subscribed topics: with a cluster (-b),
// partitions the stream never knew get an empty range at their high
// watermark; without one, only the partitions the store knows are listed,
// and a note on stderr says so.
func showOffsetsBatchSpark(cmd *cobra.Command, g *globalOptions, o *offsetsShowOptions, st *offsets.Store, info offsets.StreamInfo, b offsets.Batch) error {
	log, err := st.Batches(info.Name, 0)
	if err != nil {
		return err
	}
	start, end, _ := offsets.BatchSpan(log, b.ID, info.Next)
	topics := info.AllTopics()
	for _, r := range b.Ranges {
		if !slices.Contains(topics, r.Topic) {
			topics = append(topics, r.Topic)
		}
	}
	if len(o.topics) > 0 {
		for _, t := range o.topics {
			if !slices.Contains(topics, t) {
				return usagef("topic %s is not read by stream %s (%s)", offsets.QuoteName(t), offsets.QuoteName(info.Name), offsetsQuoteJoin(topics, "no topics"))
			}
		}
		topics = o.topics
		start, _ = offsets.FilterTopics(start, topics)
		end, _ = offsets.FilterTopics(end, topics)
	}
	client, _, err := offsetsCluster(g)
	if err != nil {
		return err
	}
	if client == nil {
		offsetsNote(cmd.ErrOrStderr(), "no -b/KBATCH_BROKERS: only the %s the store knows are listed; Spark needs every partition of each topic, pass -b to add the others", offsets.CountPartitions(len(start)))
	} else {
		defer client.Close()
		_, bounds, err := offsetsClusterPartitions(client, topics)
		if err != nil {
			return err
		}
		for p, bd := range bounds {
			if _, ok := start[p]; !ok {
				start[p], end[p] = bd.HighWatermark, bd.HighWatermark
			}
		}
		for p := range start {
			if _, ok := bounds[p]; !ok {
				return usagef("stream %s has an offset for %s, which the cluster does not have (is -b the right cluster?)", offsets.QuoteName(info.Name), p)
			}
		}
	}
	out := cmd.OutOrStdout()
	_, err = fmt.Fprintf(out, "startingOffsets=%s\nendingOffsets=%s\n",
		spark.StartingOffsetsJSON(start, nil), spark.EndingOffsetsJSON(end, nil))
	return err
}
