package replay

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
	"github.com/kbatch-dev/kbatch/offsets"
)

// Replay bounds what it has decoded and not yet
// written. With a sink that takes nothing, the partition readers stop
// fetching once the buffer's limit is reached (each waits for room), not
// once a channel of chunks is full: what they hold then stays within the
// limit plus one answer.
func TestReplayBuffersWithinItsLimit(t *testing.T) {
	tc := testkafka.New(t)
	const parts, batches, per = 4, 12, 500
	topic := tc.Topic("buffered", parts)
	rng := rand.New(rand.NewPCG(1, 2))
	var tasks []Task
	for p := int32(0); p < parts; p++ {
		for range batches { // one produce, one record batch of ~500 KiB
			recs := make([]*testkafka.Record, per)
			for i := range recs {
				v := make([]byte, 1024)
				for j := range v {
					v[j] = byte(rng.Uint32())
				}
				recs[i] = &testkafka.Record{Topic: topic, Partition: p, Value: v}
			}
			tc.Produce(recs...)
		}
		tasks = append(tasks, Task{Read: offsets.Range{Partition: offsets.Partition{Topic: topic, Partition: p}, From: 0, Until: batches * per}})
	}
	const limit = 1 << 20
	buf := newBuffered(limit)
	rd := newReader(dialTest(t, tc, false), 256<<10, buf)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chunks := startReaders(ctx, rd, tasks, parts)

	// The test is a sink that keeps every chunk and writes nothing: the
	// readers must stop on their own.
	var kept []chunk
	var biggest int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case c := <-chunks:
			kept = append(kept, c)
			biggest = max(biggest, c.mem)
			continue
		default:
		}
		held, waiting := buf.state()
		if waiting == parts {
			// The first answers are reserved at their size asked, before
			// any told how much they take: each reader may pass the limit
			// by one answer once.
			if held > limit+parts*biggest {
				t.Fatalf("every reader waits with %d bytes buffered, want at most the limit %d and one answer (%d) per reader", held, limit, biggest)
			}
			t.Logf("every reader waits with %d bytes buffered in %d chunks (limit %d, of %d records' bytes)", held, len(kept), limit, parts*batches*per*1024)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30s %d of %d readers wait for room, %d bytes buffered", waiting, parts, held)
		}
		time.Sleep(5 * time.Millisecond) // polling the readers' state
	}
	var records int
	for _, c := range kept {
		records += len(c.msgs)
		buf.release(c.mem)
	}
	for c := range chunks {
		if c.err != nil {
			t.Fatal(c.err)
		}
		records += len(c.msgs)
		buf.release(c.mem)
	}
	if held, _ := buf.state(); records != parts*batches*per || held != 0 {
		t.Fatalf("read %d records, %d bytes left buffered; want %d and 0", records, held, parts*batches*per)
	}
}
