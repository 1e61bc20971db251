package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/kbatch-dev/kbatch/consumer"
	"github.com/kbatch-dev/kbatch/filter"
	"github.com/kbatch-dev/kbatch/record"
	"github.com/kbatch-dev/kbatch/replay"
)

// whereHelp is the --where flag's help, the same on replay and watch.
const whereHelp = `keep only the records for which the CEL expression EXPR is true, e.g. 'value.amount > 90.0 && value.country == "FR"' (docs/filters.md)`

func addWhereFlag(f *pflag.FlagSet, expr *string) {
	f.StringVar(expr, "where", "", whereHelp)
}

// compileWhere compiles --where before anything is opened or read; a bad
// expression is a usage error (exit 2) of one line naming its column.
func compileWhere(expr string) (*filter.Program, error) {
	p, err := filter.Compile(expr)
	var ce *filter.CompileError
	if errors.As(err, &ce) {
		return nil, usagef("--where: %s", ce.Error())
	}
	if err != nil {
		return nil, fmt.Errorf("--where: %w", err)
	}
	return p, nil
}

// printWhere writes --where's line at the end of a run, and a hint when
// no record could be evaluated at all without a schema source: Avro or
// Protobuf bytes read without their schema have no fields.
func printWhere(w io.Writer, where *filter.Where, decoding bool) {
	fmt.Fprintln(w, where.Summary())
	if seen, _, failed := where.Counts(); seen > 0 && failed == seen && !decoding {
		fmt.Fprintln(w, "kbatch: warning: --where evaluated on no record; if the values are Avro, Protobuf or JSON Schema, give their schema: --registry URL, or --value-avro/--value-proto FILE")
	}
}

// whereSink hands on to a replay sink only the records that match.
type whereSink struct {
	replay.Sink
	where *filter.Where
	kept  []record.Record
	keep  []bool
}

func (s *whereSink) Write(recs []record.Record) error {
	s.keep = growBools(s.keep, len(recs))
	s.where.Select(len(recs), func(i int) *record.Record { return &recs[i] }, s.keep)
	s.kept = s.kept[:0]
	for i := range recs {
		if s.keep[i] {
			s.kept = append(s.kept, recs[i])
		}
	}
	if len(s.kept) == 0 {
		return nil
	}
	err := s.Sink.Write(s.kept)
	clear(s.kept) // keep no record's bytes until the next Write
	return err
}

// whereProcessor hands on to the --sink only the records of a batch that
// match, and says on the batch how many did (the batch line's
// "matched"). The batch keeps its whole ranges: it is acked as read.
type whereProcessor struct {
	inner consumer.Processor
	where *filter.Where
	kept  []*record.Record
	keep  []bool
}

func (p *whereProcessor) Process(ctx context.Context, b *consumer.Batch, recs []*record.Record) error {
	p.keep = growBools(p.keep, len(recs))
	p.where.Select(len(recs), func(i int) *record.Record { return recs[i] }, p.keep)
	p.kept = p.kept[:0]
	for i, r := range recs {
		if p.keep[i] {
			p.kept = append(p.kept, r)
		}
	}
	b.Filtered, b.Matched = true, int64(len(p.kept))
	err := p.inner.Process(ctx, b, p.kept)
	clear(p.kept) // the records are only valid during the call
	return err
}

// growBools is b with room for n.
func growBools(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	return b[:n]
}
