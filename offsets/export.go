package offsets

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kbatch-dev/kbatch/record"
)

// SortedPartitions returns the partitions of m ordered by Partition.Less.
func SortedPartitions[V any](m map[Partition]V) []Partition {
	ps := make([]Partition, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, ComparePartitions)
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
// as exactly s). When s holds a byte a terminal would act on (record's
// rule: controls, bidi overrides, invalid UTF-8) it is written in ANSI-C
// quoting instead, $'...' with those bytes as \xNN, which bash, zsh, ksh
// and POSIX.1-2024 shells read back as exactly s, and which prints safely.
func ShellQuote(s string) string {
	if !terminalSafe(s) {
		return ansiCQuote(s)
	}
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

// terminalSafe reports whether s is valid UTF-8 without a rune
// record.UnsafeRune names.
func terminalSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if record.UnsafeRune(r) {
			return false
		}
	}
	return true
}

// ansiCQuote writes s as $'...': quotes and backslashes escaped, safe runes
// as they are, every byte of an unsafe rune or of invalid UTF-8 as \xNN.
func ansiCQuote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case record.UnsafeRune(r) || r == utf8.RuneError && size == 1:
			for _, c := range []byte(s[i : i+size]) {
				b.WriteString(`\x`)
				b.WriteString(strconv.FormatUint(uint64(c)>>4, 16))
				b.WriteString(strconv.FormatUint(uint64(c)&0xf, 16))
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
