package cli

import (
	"context"
	"time"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/replay"
	"github.com/kbatch-dev/kbatch/schema"
	"github.com/kbatch-dev/kbatch/tui"
)

// runTUI shows stream on the terminal until the user quits, then closes
// the stream cleanly (tui.Run does both).
func runTUI(ctx context.Context, stream *consumer.Stream, cfg consumer.Config, g *globalOptions, resume *tui.Resume, cc kafka.ClientConfig, sd screenDecoder) error {
	store := ""
	if cfg.Store != nil {
		if p, err := g.storePath(); err == nil {
			store = p
		}
	}
	tail, _ := cfg.Tap.(*tui.Tail)
	gate, _ := cfg.SampleGate.(*tui.SampleGate)
	interval := cfg.Interval
	if interval == 0 {
		interval = time.Second
	}
	w := &screenWriter{cc: cc}
	defer w.Close()
	return tui.Run(ctx, stream, stream, tui.Options{
		Name:         cfg.Name,
		Cluster:      g.conn.Cluster,
		InsecureTLS:  g.conn.InsecureSkipVerify,
		Brokers:      cfg.Brokers,
		Topics:       cfg.Topics,
		Interval:     interval,
		ManualAck:    cfg.ManualAck,
		StorePath:    store,
		Replayer:     replayer{client: cfg.Client},
		Tail:         tail,
		SampleGate:   gate,
		Resume:       resume,
		Writer:       w,
		Groups:       groupReader{client: cfg.Client},
		GroupSetter:  groupSetter{client: cfg.Client},
		Profiles:     g.screenProfiles(),
		ProbeProfile: g.probeProfile,
		Decoder:      sd.decoder(),
		SchemaNotes:  sd.notes,
		// describe_partition.go
		DescribePartition: describePartition(cfg.Client),
	})
}

// screenDecoder is the decoder the screen uses, with the notes its
// background fetches and problems reach the screen through; zero without
// a registry or local schema.
type screenDecoder struct {
	dec   *schema.Decoder
	notes *tui.SchemaNotes
}

// decoder returns the decoder as the screen's interface: nil (not a nil
// *schema.Decoder inside an interface) when there is none.
func (s screenDecoder) decoder() tui.Decoder {
	if s.dec == nil {
		return nil
	}
	return s.dec
}

// replayer adapts package replay to the TUI's replay view. It plans on
// the stream's client, reads on a client of its own, and never touches
// the store.
type replayer struct{ client *kafka.Client }

func (r replayer) Plan(_ context.Context, ranges []string) ([]tui.ReplayTask, error) {
	now := time.Now()
	specs := make([]replay.RangeSpec, 0, len(ranges))
	for _, s := range ranges {
		spec, err := replay.ParseRange(s, now)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	tasks, err := replay.Plan(r.client, specs)
	if err != nil {
		return nil, err
	}
	out := make([]tui.ReplayTask, len(tasks))
	for i, t := range tasks {
		out[i] = tui.ReplayTask{Spec: t.Spec, Range: t.Read, Missing: t.Missing(), Capped: t.Capped}
	}
	return out, nil
}

// Read fetches on connections of its own (Client.Another), opened for
// the replay and closed at its end: on the stream's fetch connections,
// each replay fetch would wait behind the stream's long polls to the
// same broker (2000 two-record ranges: 39 s from the screen against 0.4 s
// for kbatch replay). Its other requests share the stream's connections,
// which carry no long poll.
func (r replayer) Read(ctx context.Context, tasks []tui.ReplayTask, emit func(tui.ReplayChunk) error) error {
	client, err := r.client.Another()
	if err != nil {
		return err
	}
	defer func() { _ = client.Close() }()
	rt := make([]replay.Task, len(tasks))
	for i, t := range tasks {
		// Missing parts were reported by Plan; Bounds cover Read so the
		// run does not report them again.
		rt[i] = replay.Task{Spec: t.Spec, Requested: t.Range, Read: t.Range,
			Bounds: offsets.Bounds{LogStart: t.Range.From, HighWatermark: t.Range.Until}}
	}
	_, err = replay.Run(ctx, client, rt, &emitSink{tasks: tasks, emit: emit}, replay.Options{})
	return err
}

// emitSink hands a replay's records to the TUI as chunks.
type emitSink struct {
	tasks []tui.ReplayTask
	emit  func(tui.ReplayChunk) error
}

func (s *emitSink) Write(recs []record.Record) error {
	if len(recs) == 0 {
		return nil
	}
	// Write reuses recs; the byte slices inside stay valid.
	msgs := make([]*record.Record, len(recs))
	for i := range recs {
		m := recs[i]
		msgs[i] = &m
	}
	last := msgs[len(msgs)-1]
	task := 0
	for i, t := range s.tasks {
		if t.Range.Topic == last.Topic && t.Range.Partition.Partition == last.Partition && last.Offset >= t.Range.From && last.Offset < t.Range.Until {
			task = i
			break
		}
	}
	return s.emit(tui.ReplayChunk{Task: task, Records: msgs, Next: offsets.Next(last.Offset)})
}

func (s *emitSink) Close() error { return nil }
func (s *emitSink) Abort()       {}
