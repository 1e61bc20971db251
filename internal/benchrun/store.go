package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kbatch-dev/kbatch/offsets"
)

// storeMain times the store work of each batch as the stream does it:
// Plan (write-ahead, one transaction, fsync), then Ack (one transaction,
// fsync) of a batch with one range per partition: "benchrun store [-dir
// D] [-partitions N] [-batches B]". It prints the median, 90th percentile
// and maximum of Plan, Ack and both, in microseconds:
// "plan=P50/P90/MAX ack=... both=...".
func storeMain(args []string) int {
	fs := flag.NewFlagSet("store", flag.ExitOnError)
	dir := fs.String("dir", os.TempDir(), "folder for the store file (on the disk to measure)")
	parts := fs.Int("partitions", 1000, "ranges per batch")
	batches := fs.Int("batches", 300, "batches to plan and ack")
	_ = fs.Parse(args)
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun store:", err)
		return 1
	}
	tmp, err := os.MkdirTemp(*dir, "benchrun-store-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun store:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	st, err := offsets.Open(filepath.Join(tmp, "offsets.db"), offsets.OpenOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun store:", err)
		return 1
	}
	defer st.Close()
	if err := st.EnsureStream("bench", []string{"127.0.0.1:9092"}, []string{"events"}); err != nil {
		fmt.Fprintln(os.Stderr, "benchrun store:", err)
		return 1
	}
	var plan, ack, both []time.Duration
	for id := uint64(1); id <= uint64(*batches); id++ {
		b := offsets.Batch{ID: id, Time: time.Now(), State: offsets.StatePlanned}
		for p := 0; p < *parts; p++ {
			from := int64(id-1) * 100
			b.Ranges = append(b.Ranges, offsets.BatchRange{Range: offsets.Range{
				Partition: offsets.Partition{Topic: "events", Partition: int32(p)}, From: from, Until: from + 100},
				Records: 100, Bytes: 20_000})
			b.Records += 100
			b.Bytes += 20_000
		}
		t0 := time.Now()
		if err := st.Plan("bench", b); err != nil {
			fmt.Fprintln(os.Stderr, "benchrun store:", err)
			return 1
		}
		t1 := time.Now()
		if err := st.Ack("bench", id, t1); err != nil {
			fmt.Fprintln(os.Stderr, "benchrun store:", err)
			return 1
		}
		t2 := time.Now()
		plan, ack, both = append(plan, t1.Sub(t0)), append(ack, t2.Sub(t1)), append(both, t2.Sub(t0))
	}
	fmt.Printf("plan=%s ack=%s both=%s\n", quantiles(plan), quantiles(ack), quantiles(both))
	return 0
}

// quantiles formats the median, 90th percentile and maximum in µs.
func quantiles(d []time.Duration) string {
	slices.Sort(d)
	q := func(f float64) int64 { return d[min(len(d)-1, int(f*float64(len(d))))].Microseconds() }
	return fmt.Sprintf("%d/%d/%d", q(0.5), q(0.9), d[len(d)-1].Microseconds())
}
