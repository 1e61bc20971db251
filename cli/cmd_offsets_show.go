package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/record"
)

type offsetsShowOptions struct {
	json    bool
	format  string
	batches int
	events  int
	batch   uint64
	topics  []string
}

func newOffsetsShowCommand(g *globalOptions) *cobra.Command {
	o := &offsetsShowOptions{}
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Show streams, their next offsets, recent batches and events",
		Long: `show prints every stream in the store (or the one named by --name): its next
offsets per partition, its last batches with their ranges [from, until) and
states, and its recent events. The store is opened read-only.

With --batch N it shows one batch of the stream in detail; --format spark then
prints the startingOffsets and endingOffsets option values that make a Spark
batch query read exactly that batch's ranges.`,
		Example: `  kbatch offsets show
  kbatch offsets show --name events --json
  kbatch offsets show --name events --batch 12 --format spark`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runOffsetsShow(cmd, g, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "one JSON document on stdout (same as --format json)")
	f.StringVar(&o.format, "format", "text", "text, json, or with --batch also spark")
	f.IntVar(&o.batches, "batches", 10, "batches shown per stream, newest first (0: none, -1: all)")
	f.IntVar(&o.events, "events", 10, "events shown per stream, newest first (0: none, -1: all)")
	f.Var(batchNumber{&o.batch}, "batch", "show only batch N of the stream")
	f.StringArrayVarP(&o.topics, "topic", "t", nil, "with --format spark: only these topics (the ones the Spark query subscribes to)")
	return cmd
}

func runOffsetsShow(cmd *cobra.Command, g *globalOptions, o *offsetsShowOptions) error {
	format, err := o.outputFormat(cmd.Flags().Changed("format"))
	if err != nil {
		return err
	}
	st, err := offsetsReadStore(g, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer st.Close()
	if o.batch > 0 {
		info, err := offsetsPickStream(st, g.name)
		if err != nil {
			return err
		}
		return showOffsetsBatch(cmd, g, o, st, info, format)
	}
	var streams []offsets.StreamInfo
	if g.name != "" {
		info, err := offsetsPickStream(st, g.name)
		if err != nil {
			return err
		}
		streams = []offsets.StreamInfo{info}
	} else if streams, err = st.Streams(); err != nil {
		return err
	}
	views := make([]offsetsStreamView, 0, len(streams))
	for _, info := range streams {
		v, err := loadOffsetsStreamView(st, info, o.batches, o.events)
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	return writeOffsetsShow(cmd.OutOrStdout(), st.Path(), views, format)
}

// outputFormat checks show's flags against each other and returns the
// output format: text, json, or spark (of one batch). formatChanged says
// whether --format was given (--json contradicts any other).
func (o *offsetsShowOptions) outputFormat(formatChanged bool) (string, error) {
	format := o.format
	if o.json {
		if formatChanged && format != "json" {
			return "", usagef("--json and --format %s contradict each other", format)
		}
		format = "json"
	}
	switch format {
	case "text", "json":
	case "spark":
		if o.batch == 0 {
			return "", usagef("--format spark shows one batch: add --batch N (or use kbatch offsets export --format spark for the next offsets)")
		}
	default:
		return "", usagef("invalid --format %q: want text, json or spark", format)
	}
	if len(o.topics) > 0 && format != "spark" {
		return "", usagef("--topic applies to --format spark")
	}
	if o.batches < -1 || o.events < -1 {
		return "", usagef("--batches and --events take a count, 0 for none or -1 for all")
	}
	return format, nil
}

// writeOffsetsShow prints the streams of the store at path, as one JSON
// document or as text.
func writeOffsetsShow(out io.Writer, path string, views []offsetsStreamView, format string) error {
	if format == "json" {
		doc := struct {
			Store   string              `json:"store"`
			Streams []offsetsStreamJSON `json:"streams"`
		}{path, make([]offsetsStreamJSON, len(views))}
		for i, v := range views {
			doc.Streams[i] = v.json()
		}
		return offsetsWriteJSON(out, doc)
	}
	if len(views) == 0 {
		_, err := fmt.Fprintf(out, "store %s holds no streams yet (kbatch watch creates one)\n", path)
		return err
	}
	for i, v := range views {
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := v.writeText(out); err != nil {
			return err
		}
	}
	return nil
}

// offsetsStreamView is one stream as show prints it.
type offsetsStreamView struct {
	info    offsets.StreamInfo
	pending *offsets.Batch
	batches []offsets.Batch
	events  []offsets.Event
}

func loadOffsetsStreamView(st *offsets.Store, info offsets.StreamInfo, nBatches, nEvents int) (offsetsStreamView, error) {
	v := offsetsStreamView{info: info}
	var err error
	if v.pending, err = st.Pending(info.Name); err != nil {
		return v, err
	}
	if nBatches != 0 {
		if v.batches, err = st.Batches(info.Name, max(nBatches, 0)); err != nil {
			return v, err
		}
	}
	if nEvents != 0 {
		if v.events, err = st.Events(info.Name, max(nEvents, 0)); err != nil {
			return v, err
		}
	}
	return v, nil
}

func (v offsetsStreamView) writeText(out io.Writer) error {
	info := v.info
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "stream %s\n", offsets.SafeName(info.Name))
	if info.ClusterID != "" {
		fmt.Fprintf(w, "  cluster id\t%s\n", offsets.SafeName(info.ClusterID))
	}
	fmt.Fprintf(w, "  brokers\t%s\n", record.String(offsetsQuoteJoin(info.Brokers, "-")))
	fmt.Fprintf(w, "  topics\t%s\n", record.String(offsetsQuoteJoin(info.Topics, "-")))
	fmt.Fprintf(w, "  last acked batch\t%d\n", info.LastBatch)
	fmt.Fprintf(w, "  updated\t%s\n", offsetsTime(info.Updated))
	if v.pending != nil {
		fmt.Fprintf(w, "  pending\tbatch %d is planned, not acked: the next watch re-delivers it first\n", v.pending.ID)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(info.Next) == 0 && len(info.Damaged) == 0 {
		fmt.Fprintln(out, "\n  no next offsets stored")
	} else {
		rows := [][]string{{"PARTITION", "NEXT"}}
		for _, p := range offsets.SortedPartitions(info.Next) {
			rows = append(rows, []string{offsets.SafeName(p.String()), strconv.FormatInt(info.Next[p], 10)})
		}
		for _, d := range info.Damaged {
			rows = append(rows, []string{offsets.SafeName(d.Partition.String()), offsetsDamagedNext(d)})
		}
		if err := offsetsTable(out, rows); err != nil {
			return err
		}
	}
	if len(v.batches) > 0 {
		rows := [][]string{{"BATCH", "TIME", "STATE", "RECORDS", "BYTES", "RANGES"}}
		for _, b := range v.batches {
			rows = append(rows, []string{strconv.FormatUint(b.ID, 10), offsetsTime(b.Time), offsetsBatchState(b),
				strconv.FormatInt(b.Records, 10), strconv.FormatInt(b.Bytes, 10), offsetsRanges(b.Ranges, 4)})
		}
		if err := offsetsTable(out, rows); err != nil {
			return err
		}
	}
	if len(v.events) > 0 {
		rows := [][]string{{"TIME", "EVENT", "PARTITION", "MESSAGE"}}
		for _, e := range v.events {
			rows = append(rows, []string{offsetsTime(e.Time), offsets.SafeName(e.Code), offsetsEventPartition(e), offsets.SafeName(e.Message)})
		}
		if err := offsetsTable(out, rows); err != nil {
			return err
		}
	}
	return nil
}

// offsetsTable writes an empty line, then rows as an aligned table indented
// by two spaces.
func offsetsTable(out io.Writer, rows [][]string) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintln(w, "  "+strings.Join(r, "\t"))
	}
	return w.Flush()
}

func offsetsBatchState(b offsets.Batch) string {
	s := string(b.State)
	if b.Redelivered {
		s += ", redelivered"
	}
	return s
}

// offsetsRanges renders at most max ranges, "events[0] 50→1000 (jump: seek)".
func offsetsRanges(rs []offsets.BatchRange, max int) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		s := fmt.Sprintf("%s %d→%d", offsets.SafeName(r.Partition.String()), r.From, r.Until)
		if r.Jump != "" {
			s += " (jump: " + offsets.SafeName(r.Jump) + ")"
		}
		parts = append(parts, s)
	}
	if max > 0 {
		return offsets.JoinSome(len(parts), max, func(i int) string { return parts[i] })
	}
	return strings.Join(parts, ", ")
}

func offsetsEventPartition(e offsets.Event) string {
	switch {
	case e.Topic == "":
		return "-"
	case e.Partition < 0:
		return offsets.SafeName(e.Topic)
	}
	return offsets.SafeName(offsets.Partition{Topic: e.Topic, Partition: e.Partition}.String())
}

func offsetsTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return record.FormatTimestamp(t)
}

// offsetsQuoteJoin lists names for a message escaped where it is printed
// (offsets.QuoteName), or says empty when there are none.
func offsetsQuoteJoin(ss []string, empty string) string {
	if len(ss) == 0 {
		return empty
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = offsets.QuoteName(s)
	}
	return strings.Join(out, ", ")
}

// batchNumber is the value of --batch: a batch id, 1 or more (pflag's
// uint64 would say "strconv.ParseUint: parsing "-1": invalid syntax", and
// take 0, which shows every batch as if --batch were not given).
type batchNumber struct{ n *uint64 }

func (b batchNumber) String() string {
	if b.n == nil || *b.n == 0 {
		return ""
	}
	return strconv.FormatUint(*b.n, 10)
}

func (b batchNumber) Set(s string) error {
	n, ok := offsets.ParseDigits(s)
	if !ok || n < 1 {
		return fmt.Errorf("%q is not a batch number: batches are numbered 1, 2, 3…", s)
	}
	*b.n = uint64(n)
	return nil
}

func (batchNumber) Type() string { return "N" }

// offsetsDamagedNext is the NEXT cell of a partition whose stored next
// offset fails its checksum: what it reads, and where the last acked batch
// with it ended it.
func offsetsDamagedNext(d *offsets.ChecksumError) string {
	read := "unreadable"
	if d.Stored >= 0 {
		read = "reads " + strconv.FormatInt(d.Stored, 10)
	}
	acked := "no acked batch with it in the log"
	if d.AckedBatch > 0 {
		acked = fmt.Sprintf("batch %d ended it at %d", d.AckedBatch, d.AckedUntil)
	}
	return fmt.Sprintf("? (fails its checksum: %s; %s; kbatch offsets set stores it anew)", read, acked)
}
