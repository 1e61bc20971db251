package consumer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// corruptCluster serves t[0] as records 0..2, a batch at 3 whose CRC does
// not match, and a record at 4; t[1] as records 0..9. It returns a
// stream's config on it.
func corruptCluster(t *testing.T) Config {
	t.Helper()
	bad := testkafka.At(3, 3, 3).Encode()
	bad[len(bad)-1] ^= 1
	p0 := [][]byte{testkafka.At(0, 2, 0, 1, 2).Encode(), bad, testkafka.At(4, 4, 4).Encode()}
	lasts := []int64{2, 3, 4}
	fake, err := testkafka.NewScripted("t", 2, func(p int32, offset int64) ([]byte, int64) {
		var out []byte
		if p == 1 {
			for o := max(offset, 0); o < 10; o++ {
				out = append(out, testkafka.At(o, o, o).Encode()...)
			}
			return out, 10
		}
		for i, b := range p0 {
			if lasts[i] >= offset {
				out = append(out, b...)
			}
		}
		return out, 5
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	cc := kafka.ClientConfig{Brokers: fake.ListenAddrs()}
	c, err := kafka.DialWith(cc, kafka.Tuning{MaxWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return Config{Client: c, Brokers: cc.Brokers, Topics: []string{"t"}, Name: "test", Reset: offsets.ResetEarliest,
		Interval: 50 * time.Millisecond, Samples: 3, IdleDone: 300 * time.Millisecond, MetadataInterval: 200 * time.Millisecond}
}

// A corrupt batch was a broker error retried for ever. Now: one
// corrupt-batch event at its offset, the partition's status says corrupt
// and its position stays before the batch, no broker-error, the other
// partition is read whole; a seek past the batch reads on and clears the
// state.
func TestCorruptBatchStopsThePartitionUntilASeek(t *testing.T) {
	cfg := corruptCluster(t)
	s, _, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p0 := offsets.Partition{Topic: "t", Partition: 0}
	var bs []*Batch
	corrupt, seeked := 0, false
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-s.Events():
			switch ev := ev.(type) {
			case *Notice:
				switch ev.Code {
				case offsets.CodeCorrupt:
					corrupt++
					if ev.Partition != 0 || ev.Expected != 3 {
						t.Fatalf("corrupt-batch event %+v, want t[0] at 3", ev.Event)
					}
				case offsets.CodeBrokerError:
					t.Fatalf("a corrupt batch reported as a broker error: %s", ev.Message)
				}
			case *BatchEvent:
				bs = append(bs, ev.Batch)
			case *Progress:
				for _, st := range ev.Partitions {
					if st.Partition != p0 {
						continue
					}
					switch {
					case st.Corrupt && (st.CorruptAt != 3 || st.NextOffset > 3):
						t.Fatalf("status %+v: corrupt at 3 with NEXT at most 3 wanted", st)
					case st.Corrupt && !seeked:
						_, until, _ := covered(t, bs, p0)
						_, until1, _ := covered(t, bs, offsets.Partition{Topic: "t", Partition: 1})
						if until != 3 || until1 != 10 {
							continue // the batches are not all cut yet
						}
						if _, err := s.Seek(p0, spec(t, "t:0=4")); err != nil {
							t.Fatal(err)
						}
						seeked = true
					case !st.Corrupt && seeked:
						if _, until, _ := covered(t, bs, p0); until == 5 {
							if corrupt != 1 {
								t.Errorf("%d corrupt-batch events, want 1", corrupt)
							}
							return
						}
					}
				}
			case *Ended:
				t.Fatalf("ended: %+v", ev)
			}
		case <-deadline:
			from, until, n := covered(t, bs, p0)
			t.Fatalf("after 30s: t[0] covered [%d,%d) with %d records, %d corrupt-batch events, seeked %v", from, until, n, corrupt, seeked)
		}
	}
}

// --until-end with a partition stopped at a corrupt batch ends once the
// others are done, with a CorruptError naming it.
func TestUntilEndWithACorruptBatchEndsWithItsError(t *testing.T) {
	cfg := corruptCluster(t)
	cfg.UntilEnd = true
	evs := runWithin(t, cfg, 30*time.Second)
	e := ended(t, evs)
	var ce *CorruptError
	if !errors.As(e.Err, &ce) || ce.Partition.Partition != 0 || ce.Batch.Offset != 3 {
		t.Fatalf("ended %+v, want a CorruptError at t[0] offset 3", e)
	}
	if _, until, n := covered(t, batches(evs), offsets.Partition{Topic: "t", Partition: 1}); until != 10 || n != 10 {
		t.Errorf("t[1] read to %d with %d records, want 10 and 10", until, n)
	}
}

// A partition stopped at a corrupt batch is no backlog: catch-up batches
// of the others are cut when full, not at the interval (an hour here),
// and --until-end does not wait for it.
func TestCatchUpBesideACorruptPartitionIsNotHeldBack(t *testing.T) {
	cfg := corruptCluster(t)
	cfg.UntilEnd, cfg.Interval, cfg.MaxPerPartition = true, time.Hour, 3
	evs := runWithin(t, cfg, 30*time.Second)
	var ce *CorruptError
	if e := ended(t, evs); !errors.As(e.Err, &ce) {
		t.Fatalf("ended %+v, want a CorruptError", e)
	}
	if _, until, n := covered(t, batches(evs), offsets.Partition{Topic: "t", Partition: 1}); until != 10 || n != 10 {
		t.Errorf("t[1] read to %d with %d records, want 10 and 10", until, n)
	}
}
