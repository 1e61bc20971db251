package offsets

import (
	"slices"
	"strconv"
	"strings"
)

// SortedPartitions returns the partitions of m ordered by Partition.Less.
func SortedPartitions[V any](m map[Partition]V) []Partition {
	ps := make([]Partition, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b Partition) int {
		switch {
		case a.Less(b):
			return -1
		case b.Less(a):
			return 1
		}
		return 0
	})
	return ps
}

// KcatCommands renders one kcat command line per partition of next, in
// partition order, that consumes the partition from its next offset:
//
//	kcat -C -b 127.0.0.1:9092 -t events -p 0 -o 80
//
// Every argument that is not made of shell-safe characters is single-quoted,
// so the lines can be pasted into a POSIX shell whatever the broker names
// hold. kcat has no end offset; add -e to stop at the end of the partition.
func KcatCommands(brokers []string, next map[Partition]int64) []string {
	b := ShellQuote(strings.Join(brokers, ","))
	out := make([]string, 0, len(next))
	for _, p := range SortedPartitions(next) {
		out = append(out, "kcat -C -b "+b+" -t "+ShellQuote(p.Topic)+
			" -p "+strconv.FormatInt(int64(p.Partition), 10)+" -o "+strconv.FormatInt(next[p], 10))
	}
	return out
}

// ShellQuote returns s unchanged when it is made only of characters no POSIX
// shell treats specially, and otherwise wrapped in single quotes, each
// single quote inside closed, escaped and reopened (a shell reads it back
// as exactly s).
func ShellQuote(s string) string {
	safe := s != ""
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		safe = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("._-:,/@%+=", c) >= 0
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
