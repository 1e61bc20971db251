package spark

// ParseCommitLog checks a commits/<N> file and returns its version.
//
// A commit file is "v1\n{}" (Spark 2.2–2.3), "v1\n{"nextBatchWatermarkMs":0}"
// (Spark 2.4+) or "v2\n{...}" (recent Spark with state checkpoint format 2).
// What matters to kbatch is that the file exists and is readable, so the JSON
// is not interpreted. Versions above 2 give an *UnsupportedVersionError, an
// empty file or bad version line an error wrapping ErrMalformed.
func ParseCommitLog(b []byte) (version int, err error) {
	lines := splitLines(b)
	if len(lines) == 0 {
		return 0, malformed("empty file")
	}
	return parseVersion(javaTrim(lines[0]), maxCommitLogVersion)
}
