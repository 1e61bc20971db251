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

// storeMain times the store work of each batch as the stream does it, for
// a batch with one range per partition: "benchrun store [-dir D]
// [-partitions N] [-batches B]". A batch on its own costs Plan
// (write-ahead, one transaction, fsync) and Ack (one transaction, fsync);
// batches back to back cost one AckAndPlan each (the previous batch's ack
// and this one's write-ahead). It prints the median, 90th percentile and
// maximum of Plan, Ack, both, and AckAndPlan, in microseconds:
// "plan=P50/P90/MAX ack=... both=... merged=...".
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
	batch := func(id uint64) offsets.Batch {
		b := offsets.Batch{ID: id, Time: time.Now(), State: offsets.StatePlanned}
		for p := 0; p < *parts; p++ {
			from := int64(id-1) * 100
			b.Ranges = append(b.Ranges, offsets.BatchRange{Range: offsets.Range{
				Partition: offsets.Partition{Topic: "events", Partition: int32(p)}, From: from, Until: from + 100},
				Records: 100, Bytes: 20_000})
			b.Records += 100
			b.Bytes += 20_000
		}
		return b
	}
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "benchrun store:", err)
		return 1
	}
	// A batch on its own (the stream idle between batches, or a manual
	// ack): Plan, then Ack.
	var plan, ack, both []time.Duration
	id := uint64(0)
	for range *batches {
		id++
		t0 := time.Now()
		if err := st.Plan("bench", batch(id)); err != nil {
			return fail(err)
		}
		t1 := time.Now()
		if err := st.Ack("bench", id, t1); err != nil {
			return fail(err)
		}
		t2 := time.Now()
		plan, ack, both = append(plan, t1.Sub(t0)), append(ack, t2.Sub(t1)), append(both, t2.Sub(t0))
	}
	// Batches back to back (a catch-up): each batch's plan carries the
	// previous batch's ack, one transaction per batch.
	var merged []time.Duration
	id++
	if err := st.Plan("bench", batch(id)); err != nil {
		return fail(err)
	}
	for range *batches {
		id++
		t0 := time.Now()
		if err := st.AckAndPlan("bench", id-1, t0, batch(id)); err != nil {
			return fail(err)
		}
		merged = append(merged, time.Since(t0))
	}
	fmt.Printf("plan=%s ack=%s both=%s merged=%s\n", quantiles(plan), quantiles(ack), quantiles(both), quantiles(merged))
	return 0
}

// quantiles formats the median, 90th percentile and maximum in µs.
func quantiles(d []time.Duration) string {
	slices.Sort(d)
	q := func(f float64) int64 { return d[min(len(d)-1, int(f*float64(len(d))))].Microseconds() }
	return fmt.Sprintf("%d/%d/%d", q(0.5), q(0.9), d[len(d)-1].Microseconds())
}
