package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/kafka"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

// newOffsetsCommand builds `kbatch offsets show|set|export|import`: the
// stored positions of streams, read and changed without running a stream.
func newOffsetsCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "offsets",
		Short: "Show, set, export and import the stored offsets of streams",
		Long: `offsets reads and changes the offset store (--store):

  show     streams, their next offsets, recent batches and events
  set      move partitions of a stream to offsets given as SPECs
  export   print a stream's next offsets as JSON, Spark startingOffsets, or kcat lines
  import   take next offsets from a JSON file, a consumer group or a Spark checkpoint

A running watch holds its stream exclusively: show and export then read a
consistent copy of it, while set and import of that stream fail with a
message saying so. With the default store each stream has a file of its
own, so other streams can be set meanwhile; a --store FILE is held whole.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for kbatch offsets: want show, set, export or import", args[0])
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newOffsetsShowCommand(g), newOffsetsSetCommand(g),
		newOffsetsExportCommand(g), newOffsetsImportCommand(g))
	return cmd
}

// offsetsOpenStore opens the store for an offsets subcommand: read-only,
// or read-write creating it only when create is set (import). A store held
// by a running kbatch gets a message that says so; verb is what the command
// would have done ("read", "change").
func offsetsOpenStore(g *globalOptions, readOnly, create bool, verb string) (*offsets.Store, error) {
	return offsetsOpen(g, offsets.OpenOptions{ReadOnly: readOnly}, create, verb)
}

// offsetsReadStore opens the store to read it (show, export). A store a
// running kbatch holds is read from a consistent copy, and a note on
// stderr says when the copy was taken.
func offsetsReadStore(g *globalOptions, stderr io.Writer) (*offsets.Store, error) {
	st, err := offsetsOpen(g, offsets.OpenOptions{ReadOnly: true, Snapshot: true}, false, "read")
	if err != nil {
		return nil, err
	}
	// A folder store opens each stream's file (a copy, while a watch
	// writes it) when it is first read: read them now, so the note comes
	// first. An error here comes again where the command reads.
	_, _ = st.Streams()
	if at, ok := st.Snapshot(); ok {
		offsetsNote(stderr, "the store is in use by a running kbatch: this is a copy taken at %s", at.Format("15:04:05.000"))
	}
	return st, nil
}

func offsetsOpen(g *globalOptions, opt offsets.OpenOptions, create bool, verb string) (*offsets.Store, error) {
	loc, err := g.storeLocation()
	if err != nil {
		return nil, err
	}
	path := loc.path
	if !create && !loc.exists() {
		return nil, fmt.Errorf("store %s does not exist: nothing was stored yet (kbatch watch or kbatch offsets import creates it); pass --store for another file", path)
	}
	st, err := g.openStore(opt)
	var serr *offsets.StoreError
	switch {
	case errors.Is(err, offsets.ErrLocked) && !loc.folder:
		return nil, fmt.Errorf("store %s is in use by a running kbatch (a watch holds the file exclusively while it runs); "+
			"stop it to %s offsets, or pass --store for another file", path, verb)
	case errors.Is(err, offsets.ErrReadOnly) && errors.As(err, &serr) && serr.Cause != nil:
		return nil, fmt.Errorf("store %s cannot be written (%v): to %s offsets, pass --store with a file kbatch can write "+
			"(kbatch offsets show and export read this one)", path, serr.Cause, verb)
	}
	return st, err
}

// offsetsUndamaged refuses a stream with a partition whose stored next
// offset fails its checksum (offsets.ChecksumError), as a start does:
// export must not print positions without it as if they were all.
func offsetsUndamaged(st *offsets.Store, info offsets.StreamInfo) error {
	if err := info.Check(); err != nil {
		return fmt.Errorf("store %s: stream %s: %w", st.Path(), strconv.Quote(info.Name), err)
	}
	return nil
}

// offsetsPickStream returns the stream named name, or the store's only
// stream when name is empty. An unknown name is a usage error listing the
// streams there are.
func offsetsPickStream(st *offsets.Store, name string) (offsets.StreamInfo, error) {
	streams, err := st.Streams()
	if err != nil {
		return offsets.StreamInfo{}, err
	}
	if name == "" && len(streams) == 1 {
		return streams[0], nil
	}
	for _, s := range streams {
		if s.Name == name {
			return s, nil
		}
	}
	names := make([]string, len(streams))
	for i, s := range streams {
		names[i] = offsets.QuoteName(s.Name)
	}
	have := "it has none yet"
	if len(names) > 0 {
		have = "it has " + strings.Join(names, ", ")
	}
	switch {
	case len(streams) == 0:
		return offsets.StreamInfo{}, usagef("store %s holds no streams yet (kbatch watch or kbatch offsets import creates one)", st.Path())
	case name == "":
		return offsets.StreamInfo{}, usagef("store %s holds %d streams: pass --name STREAM (%s)", st.Path(), len(streams), have)
	}
	return offsets.StreamInfo{}, usagef("unknown stream %s in store %s (%s)", offsets.QuoteName(name), st.Path(), have)
}

// offsetsCluster dials the cluster when brokers are configured (-b,
// KBATCH_BROKERS, a config profile); client is nil, with no error, when none
// are. The caller closes the client.
func offsetsCluster(g *globalOptions) (*kafka.Client, kafka.ClientConfig, error) {
	client, cc, err := g.dial()
	if errors.Is(err, errNoBrokers) {
		return nil, cc, nil
	}
	return client, cc, err
}

// offsetsClusterPartitions returns topic → partition count from the cluster,
// and every partition with its bounds.
func offsetsClusterPartitions(client *kafka.Client, topics []string) (map[string]int32, map[offsets.Partition]offsets.Bounds, error) {
	parts, err := kafka.TopicPartitions(client, topics)
	if err != nil {
		return nil, nil, err
	}
	bounds, err := kafka.ListBounds(client, parts)
	if err != nil {
		return nil, nil, fmt.Errorf("reading log starts and high watermarks: %w", err)
	}
	counts := map[string]int32{}
	for _, p := range parts {
		counts[p.Topic]++
	}
	return counts, bounds, nil
}

// offsetsCheckPending refuses to change partitions of a batch that is
// planned but not acked: the next watch re-delivers that batch from its own
// ranges and its ack moves those partitions again, so the change would not
// stick. Partitions outside the batch are safe to change.
func offsetsCheckPending(st *offsets.Store, stream string, next map[offsets.Partition]int64) error {
	pending, err := st.Pending(stream)
	if err != nil || pending == nil {
		return err
	}
	var hit []string
	for _, r := range pending.Ranges {
		if _, ok := next[r.Partition]; ok {
			hit = append(hit, r.Partition.String())
		}
	}
	if len(hit) == 0 {
		return nil
	}
	return fmt.Errorf("stream %s has batch %d planned but not acked (a watch stopped mid-batch) on %s: "+
		"the next watch re-delivers it from its own ranges and its ack moves those partitions again, so this change would not stick; "+
		"run kbatch watch --name %s until the batch is acked and try again, or give the offsets to watch as -o SPEC, which wins over the pending batch",
		offsets.QuoteName(stream), pending.ID, offsets.JoinSome(len(hit), 5, func(i int) string { return hit[i] }), offsets.QuoteName(stream))
}

// offsetsNote writes a "note: ..." line on stderr.
func offsetsNote(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, "note: "+record.String(fmt.Sprintf(format, args...)))
}
