package replay

import (
	"fmt"
	"io"
	"strings"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// WriteSummary writes one line per range read (a partition can have
// several), then a one-line total that always comes last, e.g.
//
//	events[1] requested 0 → 500: read 120 → 400, 270 records, 10 offsets without a record; missing 0 → 120 (below the log start); capped at the high watermark 400
//	replay: 1 partition, 270 records (26.4 KiB) in 1.2s, 225 rec/s; 120 offsets missing (below the log start)
func (r *Report) WriteSummary(w io.Writer) error {
	var b strings.Builder
	for _, p := range r.Partitions {
		b.WriteString(r.partitionLine(p))
		b.WriteByte('\n')
	}
	b.WriteString(r.totalLine())
	b.WriteByte('\n')
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Report) endName() string {
	if r.Committed {
		return "last stable offset"
	}
	return "high watermark"
}

func (r *Report) partitionLine(p PartitionReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s requested %d → %d: ", p.Read.Partition, p.Requested.From, p.Requested.Until)
	if p.Read.Span() == 0 {
		b.WriteString("nothing to read")
	} else {
		fmt.Fprintf(&b, "read %d → %d, %s record%s", p.Read.From, p.Position, group(p.Records), plural(p.Records))
		if e := p.Empty(); e > 0 {
			fmt.Fprintf(&b, ", %s offset%s without a record", group(e), plural(e))
		}
	}
	for _, m := range p.Missing {
		fmt.Fprintf(&b, "; missing %d → %d (below the log start)", m.From, m.Until)
	}
	if p.Capped {
		fmt.Fprintf(&b, "; capped at the %s %d", r.endName(), p.Bounds.HighWatermark)
	}
	if !p.Complete() {
		fmt.Fprintf(&b, "; incomplete (the range ends at %d)", p.Read.Until)
	}
	return b.String()
}

func (r *Report) totalLine() string {
	var b strings.Builder
	ranges := int64(len(r.Partitions))
	parts := map[offsets.Partition]bool{}
	for _, p := range r.Partitions {
		parts[p.Read.Partition] = true
	}
	b.WriteString("replay: ")
	unit := "partition" // what the counts below count
	if n := int64(len(parts)); n != ranges {
		fmt.Fprintf(&b, "%d ranges of %d partition%s", ranges, n, plural(n))
		unit = "range"
	} else {
		fmt.Fprintf(&b, "%d partition%s", n, plural(n))
	}
	fmt.Fprintf(&b, ", %s record%s (%s) in %s",
		group(r.Records), plural(r.Records), record.FormatSize(r.Bytes), shortDuration(r.Elapsed))
	if secs := r.Elapsed.Seconds(); secs > 0 && r.Records > 0 {
		fmt.Fprintf(&b, ", %s rec/s", group(int64(float64(r.Records)/secs)))
	}
	if m := r.MissingOffsets(); m > 0 {
		fmt.Fprintf(&b, "; %s offset%s missing (below the log start)", group(m), plural(m))
	}
	var capped, incomplete int64
	for _, p := range r.Partitions {
		if p.Capped {
			capped++
		}
		if !p.Complete() {
			incomplete++
		}
	}
	if capped > 0 {
		fmt.Fprintf(&b, "; %d capped at the %s", capped, r.endName())
	}
	if incomplete > 0 {
		fmt.Fprintf(&b, "; %d %s%s not read to the end", incomplete, unit, plural(incomplete))
	}
	return b.String()
}
