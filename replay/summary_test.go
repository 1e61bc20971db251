package replay

import (
	"strings"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// TestSummaryCountsPartitionsNotRanges: two ranges of one partition are
// one partition; the total said "2 partitions", and then "2 partitions not
// read to the end".
func TestSummaryCountsPartitionsNotRanges(t *testing.T) {
	r0 := func(from, until int64) PartitionReport {
		rg := offsets.Range{Partition: tp, From: from, Until: until}
		return PartitionReport{Task: Task{Requested: rg, Read: rg, Bounds: offsets.Bounds{HighWatermark: 100}}, Position: until, Records: until - from}
	}
	short := func(p PartitionReport) PartitionReport { // read only halfway
		p.Position = p.Read.From + p.Read.Span()/2
		p.Records /= 2
		return p
	}
	for _, c := range []struct {
		parts []PartitionReport
		want  string
	}{
		{[]PartitionReport{r0(0, 10), r0(20, 30)}, "replay: 2 ranges of 1 partition, 20 records"},
		{[]PartitionReport{r0(0, 10)}, "replay: 1 partition, 10 records"},
		{[]PartitionReport{short(r0(0, 10)), short(r0(20, 30))}, "; 2 ranges not read to the end"},
		{[]PartitionReport{short(r0(0, 10))}, "; 1 partition not read to the end"},
	} {
		rep := &Report{Partitions: c.parts, Elapsed: time.Second}
		for _, p := range c.parts {
			rep.Records += p.Records
		}
		var b strings.Builder
		if err := rep.WriteSummary(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("summary\n%s\nwant a line with %q", b.String(), c.want)
		}
	}
}

func TestWriteSummary(t *testing.T) {
	rep := &Report{
		Partitions: []PartitionReport{
			{Task: Task{Requested: offsets.Range{Partition: tp, From: 100, Until: 200}, Read: offsets.Range{Partition: tp, From: 100, Until: 200},
				Bounds: offsets.Bounds{HighWatermark: 400}}, Position: 200, Records: 98, Bytes: 9800},
			{Task: Task{Requested: offsets.Range{Partition: offsets.Partition{Topic: "t", Partition: 1}, From: 0, Until: 500},
				Read: offsets.Range{Partition: offsets.Partition{Topic: "t", Partition: 1}, From: 120, Until: 400}, Bounds: offsets.Bounds{LogStart: 120, HighWatermark: 400}, Capped: true},
				Position: 400, Records: 270, Bytes: 17240,
				Missing: []offsets.Range{{Partition: offsets.Partition{Topic: "t", Partition: 1}, From: 0, Until: 120}}},
			{Task: Task{Requested: offsets.Range{Partition: offsets.Partition{Topic: "t", Partition: 2}, From: 5, Until: 5},
				Read: offsets.Range{Partition: offsets.Partition{Topic: "t", Partition: 2}, From: 5, Until: 5}}, Position: 5},
		},
		Records: 368, Bytes: 27040, Elapsed: 2 * time.Second,
	}
	var b strings.Builder
	if err := rep.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	want := `t[0] requested 100 → 200: read 100 → 200, 98 records, 2 offsets without a record
t[1] requested 0 → 500: read 120 → 400, 270 records, 10 offsets without a record; missing 0 → 120 (below the log start); capped at the high watermark 400
t[2] requested 5 → 5: nothing to read
replay: 3 partitions, 368 records (26.4 KiB) in 2.0s, 184 rec/s; 120 offsets missing (below the log start); 1 capped at the high watermark
`
	if b.String() != want {
		t.Errorf("summary\n%s\nwant\n%s", b.String(), want)
	}
	err := newPartialError(rep)
	if err.ExitCode() != 3 || err.Error() != "replay incomplete: 120 requested offsets no longer exist (below the log start): t[1] 0 → 120; everything still available was written" {
		t.Errorf("partial error %q", err.Error())
	}
}
