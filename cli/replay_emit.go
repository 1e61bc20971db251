package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kbatch-dev/kbatch/atomicfile"
	"github.com/kbatch-dev/kbatch/filter"
	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/replay"
)

// replayEmitOptions are replay's --emit flags.
type replayEmitOptions struct {
	target string // "spark"
	output string // --spark-output
	format string // --spark-format
}

func addReplayEmitFlags(f *pflag.FlagSet, o *replayEmitOptions) {
	f.StringVar(&o.target, "emit", "", "spark: write a Spark job that reads the RANGEs (into the folder --out) instead of reading them")
	f.StringVar(&o.output, "spark-output", "", "with --emit spark: where the job writes the records (a path or URL Spark can write)")
	f.StringVar(&o.format, "spark-format", "parquet", "with --emit spark: parquet or json")
}

// Names of the emitted job files.
const (
	emitPySpark = "kbatch_replay.py"
	emitScala   = "KbatchReplay.scala"
)

// runReplayEmit is replay --emit spark: resolve the RANGEs on the cluster
// and write the PySpark and Scala jobs that read exactly them.
func runReplayEmit(g *globalOptions, o *replayOptions, args []string, stdout, stderr io.Writer) error {
	e := o.emit
	switch {
	case e.target != "spark":
		return usagef("invalid --emit %q: want spark", e.target)
	case e.output == "":
		return usagef("--emit spark needs --spark-output PATH: where the Spark job writes the records")
	case e.format != "parquet" && e.format != "json":
		return usagef("invalid --spark-format %q: want parquet or json", e.format)
	case o.out == "" || o.out == "-":
		return usagef("--emit spark writes two files: give their folder with --out DIR")
	case o.toTopic != "":
		return usagef("--emit spark and --to-topic exclude each other")
	case o.format != "json" || o.dec.decode:
		return usagef("--format and --decode shape kbatch's own output; the Spark job writes Spark's columns")
	}
	var where *filter.Program
	if o.where != "" {
		var err error
		if where, err = compileWhere(o.where); err != nil {
			return err
		}
	}
	if o.isolation != "uncommitted" {
		return usagef("--isolation with --emit spark: set the job's kafka.isolation.level yourself; Spark reads uncommitted by default like kbatch")
	}
	specs := make([]replay.RangeSpec, 0, len(args))
	for _, a := range args {
		s, err := replay.ParseRange(a, time.Now())
		if err != nil {
			return err
		}
		specs = append(specs, s)
	}
	conn, err := g.connection()
	if err != nil {
		return err
	}
	client, cc, err := g.dial()
	if err != nil {
		return err
	}
	defer client.Close()
	tasks, err := replay.Plan(client, specs)
	if err != nil {
		return err
	}
	job := spark.Job{Bootstrap: cc.Brokers, Output: e.output, Format: e.format,
		Comment: fmt.Sprintf("Written by kbatch replay --emit spark at %s for %s.", time.Now().UTC().Format(time.RFC3339), strings.Join(args, " ")),
		Security: spark.JobSecurity{
			TLS: conn.TLS.On(), CAFile: conn.TLS.CAFile, ClientCert: conn.TLS.CertFile != "",
			NoHostnameCheck: conn.TLS.Insecure(),
		}}
	if where != nil {
		note := whereNotInSpark(o.where)
		if sql, err := where.SparkSQL(); err == nil {
			job.Where = sql
			note = "--where " + o.where + " is applied by this job as the Spark SQL condition " + sql
		} else {
			note += " (" + err.Error() + ")"
		}
		job.Comment += "\n" + note
		fmt.Fprintln(stderr, "kbatch: note: "+record.String(note))
	}
	if conn.SASL.On() {
		job.Security.SASLMechanism, job.Security.SASLUser = conn.SASL.Mechanism, conn.SASL.User
	}
	var total int64
	partial := &replay.PartialError{}
	for _, t := range tasks {
		job.Ranges = append(job.Ranges, t.Read)
		total += t.Read.Span()
		if m := t.Missing(); m.Span() > 0 {
			partial.Missing = append(partial.Missing, m)
		}
	}
	if total == 0 {
		return usagef("the RANGEs hold no offsets to read (empty, or below the log start): no job written")
	}
	if err := os.MkdirAll(o.out, 0o700); err != nil { // docs/design.md §2.7: folders 0700, files 0600
		return fmt.Errorf("--out %s: %w", offsets.QuoteName(o.out), err)
	}
	for name, text := range map[string]string{emitPySpark: job.PySpark(), emitScala: job.Scala()} {
		if err := writeFileAtomic(filepath.Join(o.out, name), []byte(text)); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "wrote %s and %s: a Spark job reading %d offsets of %d partition ranges into %s (%s)\n",
		offsets.SafeName(filepath.Join(o.out, emitPySpark)), emitScala, total, len(tasks), offsets.SafeName(e.output), e.format)
	if len(partial.Missing) > 0 {
		return partial
	}
	if short := replay.Short(tasks, cc.ReadCommitted); short != nil {
		return short
	}
	return nil
}

// whereNotInSpark is the note the Spark job and stderr carry under a
// --where that Spark cannot evaluate (filter.Program.SparkSQL): the job's
// records are its raw columns, and kbatch decodes keys and values.
func whereNotInSpark(expr string) string {
	return "--where " + expr + " is NOT applied by this job: Spark cannot evaluate kbatch's CEL expressions over decoded records, so the job writes every record of the ranges; filter its output in Spark (df.where) or run kbatch replay --where"
}

// writeFileAtomic writes path, mode 0600, complete or not at all
// (atomicfile.WriteFile).
func writeFileAtomic(path string, b []byte) error {
	if err := atomicfile.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", offsets.QuoteName(path), cause(err))
	}
	return nil
}
