package sparkwatch

import (
	"fmt"
	"slices"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// Notice codes of kbatch spark, beside the offsets.Code* ones.
const (
	// CodeSparkPurged: a Spark batch cannot be shown because the offset
	// log file it starts from is gone (Spark purges old batches).
	CodeSparkPurged = "spark-purged"
	// CodeSparkUnreadable: a checkpoint file could not be read or parsed;
	// the watch keeps polling and says when it can read it again.
	CodeSparkUnreadable = "spark-unreadable"
	// CodeSparkRecreated: the checkpoint's metadata id changed: the
	// folder was deleted and a new query started in it.
	CodeSparkRecreated = "spark-recreated"
)

// sparkBatch turns one Spark micro-batch into a kbatch batch. The batch id
// is the Spark batch id, and each partition the batch moved gets a range
// [Start, End): Spark's offsets/ID-1 line (or the initial offsets) to its
// offsets/ID line, exactly what Spark read. Partitions that did not move
// get no range, as in a kbatch batch. The state is acked when Spark
// committed the batch, else planned (Spark is running it).
//
// Spark does not record how many records a batch read, so Records is the
// span of each range (an upper bound: compaction and transaction markers
// leave offsets without a record) and Bytes is 0.
//
// A partition in End but not in Start was new to the query: Spark read it
// from its log start, taken from bounds (0 when unknown), and the range is
// marked as a new-partition jump. A partition whose End is below its Start
// (the topic was recreated, or Spark's failOnDataLoss=false skipped) gets
// no range but an offset-out-of-range notice.
//
// Worked example: Start {e[0]:5, e[1]:3}, End {e[0]:12, e[1]:3, e[2]:4},
// bounds of e[2] [2, 9): ranges e[0] 5 → 12 (7 records) and e[2] 2 → 4
// (jump new-partition), Records 9, and one new-partition notice.
func sparkBatch(br spark.BatchRanges, at time.Time, bounds map[offsets.Partition]offsets.Bounds) (*consumer.Batch, []offsets.Event) {
	b := &consumer.Batch{Batch: offsets.Batch{ID: uint64(br.ID), Time: at, State: offsets.StatePlanned}}
	if br.Committed {
		b.State = offsets.StateAcked
	}
	var notices []offsets.Event
	for _, p := range br.End.Partitions() {
		until := br.End[p]
		r := offsets.BatchRange{Range: offsets.Range{Partition: p, Until: until}}
		from, known := br.Start[p]
		if !known {
			from = 0
			if bd, ok := bounds[p]; ok && bd.LogStart >= 0 {
				from = min(bd.LogStart, until)
			}
			r.Jump = offsets.CodeNewPartition
			e := offsets.NewEvent(at, offsets.CodeNewPartition, p,
				fmt.Sprintf("spark batch %d: %s is new to the query; Spark read it from its log start (taken as %d)", br.ID, p, from))
			e.To = from
			notices = append(notices, e)
		}
		r.From = from
		switch {
		case until < from:
			e := offsets.NewEvent(at, offsets.CodeOutOfRange, p,
				fmt.Sprintf("spark batch %d: %s ends at %d, before the %d it started from (was the topic recreated?); no range shown", br.ID, p, until, from))
			e.Expected, e.From, e.To = from, from, until
			notices = append(notices, e)
			continue
		case until == from:
			continue
		}
		r.Records = r.Span()
		b.Records += r.Records
		b.Ranges = append(b.Ranges, r)
	}
	return b, notices
}

// sparkStatuses is every partition's status for a consumer.Progress: next is where
// the newest Spark batch ends (what Spark reads next), stored what the
// last committed batch ends at (where a restart resumes), bounds the last
// known log starts and high watermarks. A partition without bounds shows
// -1 for both and no lag.
//
// Worked example: next 120, stored 100, high watermark 150 → Lag 30.
func sparkStatuses(parts []offsets.Partition, next, stored map[offsets.Partition]int64,
	bounds map[offsets.Partition]offsets.Bounds, rates map[offsets.Partition]float64) []consumer.PartitionStatus {
	out := make([]consumer.PartitionStatus, 0, len(parts))
	for _, p := range parts {
		st := consumer.PartitionStatus{Partition: p, Source: offsets.SourceImport, NextOffset: next[p], Stored: -1,
			Bounds: offsets.Bounds{LogStart: -1, HighWatermark: -1}, Rate: rates[p]}
		if s, ok := stored[p]; ok {
			st.Stored = s
		}
		if bd, ok := bounds[p]; ok {
			st.Bounds = bd
			st.Lag = max(0, bd.HighWatermark-st.NextOffset)
		}
		out = append(out, st)
	}
	return out
}

// sparkRateWindow is how far back kbatch spark looks to compute read
// rates: Spark batches come in bursts, seconds to minutes apart.
const sparkRateWindow = time.Minute

// sparkRates keeps the ranges of recent Spark batches to compute records
// per second per partition over the last window.
type sparkRates struct {
	window  time.Duration
	batches []*consumer.Batch // by time, oldest first
}

// add remembers b if it is recent enough to count.
func (r *sparkRates) add(b *consumer.Batch, now time.Time) {
	if now.Sub(b.Time) > r.window {
		return
	}
	i, _ := slices.BinarySearchFunc(r.batches, b.Time, func(x *consumer.Batch, t time.Time) int { return x.Time.Compare(t) })
	r.batches = slices.Insert(r.batches, i, b)
}

// rates returns records per second per partition, and for the whole query,
// over the window before now: the spans of the batches Spark planned in
// that time divided by the window. Batches older than the window are
// forgotten.
//
// Worked example: two batches in the last minute read 600 and 1200 offsets
// of e[0] → 30 rec/s.
func (r *sparkRates) rates(now time.Time) (map[offsets.Partition]float64, float64) {
	cut := 0
	for cut < len(r.batches) && now.Sub(r.batches[cut].Time) > r.window {
		cut++
	}
	r.batches = slices.Delete(r.batches, 0, cut)
	per := map[offsets.Partition]float64{}
	var total float64
	secs := r.window.Seconds()
	for _, b := range r.batches {
		for _, rg := range b.Ranges {
			v := float64(rg.Span()) / secs
			per[rg.Partition] += v
			total += v
		}
	}
	return per, total
}

// checkSparkTopics refuses offsets naming a topic Kafka cannot have
// (offsets.CheckTopic: [a-zA-Z0-9._-], 1 to 249 characters, not "." or
// ".."): such a line is not from a Kafka source, and its bytes must not
// reach a terminal or a JSON line unescaped. The error quotes the name.
func checkSparkTopics(o spark.Offsets) error {
	for p := range o {
		if offsets.CheckTopic(p.Topic) != nil {
			return fmt.Errorf("%w: topic %q is not a legal Kafka topic name (only [a-zA-Z0-9._-])", spark.ErrMalformed, p.Topic)
		}
	}
	return nil
}

// sortedPartitions returns the keys of the maps, sorted, without
// duplicates.
func sortedPartitions(ms ...map[offsets.Partition]int64) []offsets.Partition {
	seen := map[offsets.Partition]bool{}
	var out []offsets.Partition
	for _, m := range ms {
		for p := range m {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	slices.SortFunc(out, offsets.ComparePartitions)
	return out
}

// topicsOf returns the distinct topics of parts in order.
func topicsOf(parts []offsets.Partition) []string {
	var out []string
	for _, p := range parts {
		if len(out) == 0 || out[len(out)-1] != p.Topic {
			out = append(out, p.Topic)
		}
	}
	return out
}
