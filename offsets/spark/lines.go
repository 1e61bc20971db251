package spark

import (
	"strconv"
	"strings"
)

// Newest log versions kbatch reads. Spark's OffsetSeqLog and CommitLog read
// up to v2 on current master; the Kafka initial-offset log has only ever been
// v1.
const (
	maxOffsetLogVersion     = 2
	maxCommitLogVersion     = 2
	maxInitialOffsetVersion = 1
)

// splitLines splits b into lines the way Scala's Source.getLines, which Spark
// uses to read its logs, does: "\n", "\r\n" and "\r" end a line, and a final
// line terminator does not start another (empty) line.
func splitLines(b []byte) []string {
	var lines []string
	start := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n':
			lines = append(lines, string(b[start:i]))
			start = i + 1
		case '\r':
			lines = append(lines, string(b[start:i]))
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(b) {
		lines = append(lines, string(b[start:]))
	}
	return lines
}

// parseVersion validates a version line like Spark's
// MetadataVersionUtil.validateVersion: "v" followed by a positive 32-bit
// integer, at most max.
func parseVersion(line string, max int) (int, error) {
	if len(line) < 2 || line[0] != 'v' {
		return 0, malformed("failed to read log version from the first line (%d bytes, not v<number>)", len(line))
	}
	n, err := strconv.ParseInt(line[1:], 10, 32)
	if err != nil || n <= 0 {
		return 0, malformed("failed to read log version from the first line (%d bytes, not v<number>)", len(line))
	}
	if int(n) > max {
		return 0, &UnsupportedVersionError{Version: int(n), Max: max}
	}
	return int(n), nil
}

// javaTrim trims like Java's String.trim: every character up to and
// including U+0020 at either end.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}
