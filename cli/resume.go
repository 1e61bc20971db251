package cli

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/tui"
)

// resumeBatches is how many batches of the log the screen shows at start.
const resumeBatches = 20

// resumeInfo is what the store holds of the stream before this run starts
// it; nil without a store or before the stream's first ack.
func resumeInfo(store consumer.Store, name string) *tui.Resume {
	st, ok := store.(batchLog)
	if !ok {
		return nil
	}
	info, ok, err := st.Stream(name)
	if err != nil || !ok || info.LastBatch == 0 {
		return nil // the stream's start reports a store it cannot read
	}
	bs, err := st.Batches(name, resumeBatches)
	if err != nil {
		bs = nil
	}
	r := &tui.Resume{LastBatch: info.LastBatch, Batches: bs}
	for _, b := range bs {
		if b.ID == info.LastBatch {
			r.AckedAt = b.AckedAt
		}
	}
	return r
}

// batchLog is the part of *offsets.Store resumeInfo reads.
type batchLog interface {
	Stream(name string) (offsets.StreamInfo, bool, error)
	Batches(stream string, limit int) ([]offsets.Batch, error)
}

// storedPartsShown is how many partitions a quit line lists per topic.
const storedPartsShown = 16

// printStored writes, when the screen has closed, one line per topic with
// the next offsets stored for the stream, on stderr: stdout carries only
// machine-readable output (docs/design.md §4), and notes for people go to stderr,
// as replay's summary does. Headless runs do not print it.
func printStored(w io.Writer, cfg consumer.Config, path string) {
	if cfg.Store == nil {
		fmt.Fprintln(w, "kbatch: --no-store: no positions were stored")
		return
	}
	info, ok, err := cfg.Store.Stream(cfg.Name)
	if err != nil {
		fmt.Fprintln(w, "kbatch: reading the stored positions: "+record.String(err.Error()))
		return
	}
	where := fmt.Sprintf("stream %s in %s", cfg.Name, path)
	if ok && info.LastBatch > 0 {
		where = fmt.Sprintf("stream %s after batch %d in %s", cfg.Name, info.LastBatch, path)
	}
	for _, topic := range cfg.Topics {
		var parts []int32
		for p := range info.Next {
			if p.Topic == topic {
				parts = append(parts, p.Partition)
			}
		}
		slices.Sort(parts)
		var sb strings.Builder
		for i, p := range parts {
			if i == storedPartsShown {
				fmt.Fprintf(&sb, " … %d more (kbatch offsets show)", len(parts)-i)
				break
			}
			sb.WriteString(" " + strconv.Itoa(int(p)) + "=" + strconv.FormatInt(info.Next[offsets.Partition{Topic: topic, Partition: p}], 10))
		}
		positions := sb.String()
		if len(parts) == 0 {
			positions = " none yet (no batch acked)"
		}
		fmt.Fprintln(w, record.String(fmt.Sprintf("kbatch: stored %s:%s (%s)", topic, positions, where)))
	}
}
