package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kbatch-dev/kbatch/offsets"
	"github.com/kbatch-dev/kbatch/offsets/exchange"
	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// offsetsReadJSONFile reads --from-json: kbatch's export document, or Spark
// offset JSON.
func offsetsReadJSONFile(stdin io.Reader, stderr io.Writer, path string) (offsetsImported, error) {
	var r io.Reader = stdin
	from := "standard input"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return offsetsImported{}, fmt.Errorf("--from-json: %w", err)
		}
		defer f.Close()
		r, from = f, path
	}
	b, err := io.ReadAll(io.LimitReader(r, 64<<20))
	if err != nil {
		return offsetsImported{}, fmt.Errorf("--from-json %s: %w", from, err)
	}
	doc, skipped, err := exchange.Parse(b)
	if err != nil {
		return offsetsImported{}, usagef("--from-json %s: %v", offsets.QuoteName(from), err)
	}
	imp := offsetsImported{Document: doc, from: offsets.QuoteName(from)}
	if len(skipped) > 0 {
		names := make([]string, len(skipped))
		for i, p := range skipped {
			names[i] = offsets.QuoteName(p.String())
		}
		offsetsNote(stderr, "%s: %s are -2 (earliest) or -1 (latest), not positions; left out (watch starts them per --reset)", imp.from, offsets.JoinSome(len(names), 10, func(i int) string { return names[i] }))
	}
	return imp, nil
}

// offsetsReadSpark reads --from-spark: the offsets the query last committed.
func offsetsReadSpark(stderr io.Writer, dir string, source int) (offsetsImported, error) {
	cp, done, err := openSparkCheckpoint(context.Background(), dir)
	if err != nil {
		return offsetsImported{}, err
	}
	defer done()
	pos, err := cp.CommittedOffsets(source)
	if errors.Is(err, spark.ErrNoKafkaSource) || errors.Is(err, spark.ErrSeveralKafkaSources) {
		return offsetsImported{}, usageError{err}
	}
	if err != nil {
		return offsetsImported{}, err
	}
	imp := offsetsImported{Document: exchange.Document{Next: map[offsets.Partition]int64(pos.Offsets)},
		from: fmt.Sprintf("Spark checkpoint %s, %s", offsets.QuoteName(cp.Dir), offsets.QuoteName(pos.Origin))}
	if pos.InFlight != nil {
		offsetsNote(stderr, "Spark had planned the batch after the committed one but not committed it; it would re-run that batch, and watch reads its ranges too from the imported offsets")
	}
	return imp, nil
}
