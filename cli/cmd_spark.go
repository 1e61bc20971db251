package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/sparkwatch"
	"github.com/kbatch-dev/kbatch/tui"
)

// sparkOptions are the flags of kbatch spark.
type sparkOptions struct {
	source   int
	interval time.Duration
	last     int
	samples  int
	noTUI    bool
	once     bool
	batches  int
}

func newSparkCommand(g *globalOptions) *cobra.Command {
	o := &sparkOptions{}
	cmd := &cobra.Command{
		Use:   "spark CHECKPOINT_DIR",
		Short: "Watch a Spark Structured Streaming query's Kafka batches (read-only)",
		Long: `spark follows a Structured Streaming query through its checkpoint folder
and shows its Kafka micro-batches on the same screen as watch. Spark batch N
read [offsets/N-1, offsets/N) per partition (batch 0 starts at the source's
initial offsets, sources/<i>/0); it is "planned" while Spark runs it and
"acked" once commits/N exists. With -b, each partition shows its lag to the
high watermark and r replays exactly what a batch read. The folder is only
ever read; pause, seek and ack are refused.

With --no-tui it writes the batches as JSON lines (like watch --no-tui, with
"spark_batch" on batch lines and "checkpoint" on the start line).`,
		Example: `  kbatch spark /data/checkpoints/orders -b localhost:9092
  kbatch spark /data/checkpoints/orders --no-tui --once
  kbatch spark hdfs-copy/query1 -b localhost:9092 --no-tui --batches 3`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("spark needs one CHECKPOINT_DIR (the query's checkpointLocation), got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSpark(cmd.Context(), g, o, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.source, "source", -1, "source index of the Kafka source (default: the query's only one)")
	f.DurationVar(&o.interval, "interval", time.Second, "how often the checkpoint folder is polled")
	f.IntVar(&o.last, "last", 100, "batches already in the checkpoint to show at start (the newest N)")
	f.IntVar(&o.samples, "samples", 5, "records read per partition of each new batch for the records pane (TUI, needs -b)")
	f.BoolVar(&o.noTUI, "no-tui", false, "headless: JSON lines on stdout")
	f.BoolVar(&o.once, "once", false, "headless: print the batches in the checkpoint now and exit")
	f.IntVar(&o.batches, "batches", 0, "headless: stop after N batches were committed while watching")
	return cmd
}

func runSpark(ctx context.Context, g *globalOptions, o *sparkOptions, dir string, stdout, stderr io.Writer) error {
	if err := checkSamples(o.samples); err != nil {
		return err
	}
	switch {
	case o.interval <= 0:
		return usagef("invalid --interval %s: must be positive", o.interval)
	case o.source < -1:
		return usagef("invalid --source %d: want a source index, 0 or more", o.source)
	case o.last < 0:
		return usagef("invalid --last %d: must be 0 or more", o.last)
	case o.batches < 0:
		return usagef("invalid --batches %d: must be 0 or more", o.batches)
	case !o.noTUI && (o.once || o.batches > 0):
		return usagef("--once and --batches are headless stop conditions; add --no-tui")
	case o.once && o.batches > 0:
		return usagef("--once and --batches exclude each other")
	}
	if !o.noTUI {
		if err := checkTerminal(g); err != nil {
			return err
		}
	}
	// A folder that is not a readable checkpoint fails before the cluster
	// is reached.
	_, done, err := openSparkCheckpoint(ctx, dir)
	if err != nil {
		return err
	}
	done()
	cfg := sparkwatch.Config{Dir: dir, Source: o.source, Interval: o.interval, Last: o.last,
		Once: o.once, MaxBatches: o.batches}
	client, cc, err := offsetsCluster(g)
	if err != nil {
		return err
	}
	if client != nil {
		defer client.Close()
		cfg.Client, cfg.Brokers = client, cc.Brokers
		if !o.noTUI {
			cfg.Samples = o.samples // read with replay (sparkwatch.ReplaySampler)
		}
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	w, err := sparkwatch.Start(ctx, cfg)
	if errors.Is(err, spark.ErrNoKafkaSource) || errors.Is(err, spark.ErrSeveralKafkaSources) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	if client == nil {
		fmt.Fprintln(stderr, "note: no -b/KBATCH_BROKERS: showing the checkpoint's batches without lag, samples or replay")
	}
	if o.noTUI {
		return writeSparkJSONLines(w, stdout)
	}
	opts := tui.Options{Name: w.Started().Stream, Brokers: cfg.Brokers, Topics: w.Started().Topics, Interval: o.interval}
	if client != nil {
		opts.Replayer = replayer{client: client}
	}
	return tui.Run(ctx, w, nil, opts) // read-only: no controls
}

// writeSparkJSONLines prints the watch's events until it ends.
func writeSparkJSONLines(w *sparkwatch.Watch, stdout io.Writer) error {
	out := bufio.NewWriterSize(stdout, 64<<10)
	var buf []byte
	var werr error
	for ev := range w.Events() {
		if werr != nil {
			continue // drain until the watch ends
		}
		var err error
		if buf, err = w.AppendEventJSON(buf[:0], ev); err != nil {
			werr = err
		} else if _, err := out.Write(buf); err != nil {
			werr = fmt.Errorf("writing to stdout: %w", err)
		} else if _, progress := ev.(*consumer.Progress); !progress {
			if err := out.Flush(); err != nil {
				werr = fmt.Errorf("writing to stdout: %w", err)
			}
		}
		if werr != nil {
			go func() { _ = w.Close() }() // ends the watch; this loop drains it
		}
	}
	if err := w.Close(); err != nil && werr == nil {
		werr = err
	}
	return werr
}
