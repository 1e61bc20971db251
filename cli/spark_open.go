package cli

import (
	"context"

	"github.com/kbatch-dev/kbatch/offsets/spark"
	"github.com/kbatch-dev/kbatch/offsets/spark/objstore"
)

// openSparkCheckpoint reads the Spark checkpoint at loc, a folder or an
// object-store URL (s3://, gs://, abfss://, wasbs://; package objstore):
// its listings and last commit. The Checkpoint reads more files on demand;
// done closes the store once the caller has read what it needs.
func openSparkCheckpoint(ctx context.Context, loc string) (cp *spark.Checkpoint, done func(), err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := objstore.Open(ctx, loc)
	if err != nil {
		return nil, nil, err
	}
	if cp, err = spark.OpenStore(s); err != nil {
		_ = s.Close()
		return nil, nil, err
	}
	return cp, func() { _ = s.Close() }, nil
}
