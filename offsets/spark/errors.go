package spark

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrMalformed is wrapped by every error about bytes that are not in the
// format Spark writes (a bad version line, a line that is not JSON, a Kafka
// offset JSON of the wrong shape). Test for it with errors.Is.
var ErrMalformed = errors.New("malformed")

// ErrNoKafkaSource is wrapped when a checkpoint has no source whose offset is
// a Kafka offset JSON, for example a query reading files or a rate source.
var ErrNoKafkaSource = errors.New("no Kafka source")

// ErrSeveralKafkaSources is wrapped when the caller asked for "the" Kafka
// source (index -1) but the query has more than one, as a stream-stream join
// of two topics does. The caller must pass a source index to choose.
var ErrSeveralKafkaSources = errors.New("several Kafka sources")

// UnsupportedVersionError reports a log file written in a version newer than
// kbatch reads. Spark refuses such files too: they come from a newer Spark.
type UnsupportedVersionError struct {
	Version int // the version found in the file, e.g. 99999 for "v99999"
	Max     int // the newest version kbatch reads for this kind of file
}

// Error renders "unsupported log version v99999 (kbatch reads up to v2)".
func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("unsupported log version v%d (kbatch reads up to v%d)", e.Version, e.Max)
}

// malformed returns an error wrapping ErrMalformed: "malformed: <detail>".
func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// quoteName quotes at most 60 bytes of a name found in a checkpoint (a
// topic, a source id) for an error message; the quoting escapes control
// characters. File content other than such names is never quoted in an
// error: a checkpoint file can be anything (a symlink to a secret, a
// stranger's bytes), so errors name the file, the line and the problem.
func quoteName(s string) string {
	const max = 60
	if len(s) > max {
		return strconv.Quote(s[:max]) + "…"
	}
	return strconv.Quote(s)
}
