package cli

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

// A broker that sends what an honest one never would, in Fetch answers
// with valid framing (kfake's ControlKey, testkafka.NewScripted): corrupt
// batches, offsets out of order, compression bombs, thousands of
// partitions. Each stops its partition with one clear line, the other
// partitions go on, and memory stays within the limits.

// scripted starts a scripted broker (testkafka.NewScripted) and returns
// its address.
func scripted(t *testing.T, topic string, partitions int32, serve testkafka.Serve) string {
	t.Helper()
	fake, err := testkafka.NewScripted(topic, partitions, serve)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	return fake.ListenAddrs()[0]
}

// logOf serves a partition's batches: each with its first and last
// offset, answered from the first whose last offset is at or past the
// offset fetched.
type logOf []struct {
	first, last int64
	raw         []byte
}

func (l logOf) from(offset int64) []byte {
	var out []byte
	for _, b := range l {
		if b.last >= offset {
			out = append(out, b.raw...)
		}
	}
	return out
}

func (l logOf) end() int64 { return l[len(l)-1].last + 1 }

// rawRecord is a batch at offset holding one record of the given bytes
// (after the record's length), sealed: lengths and varints that lie
// under a valid CRC.
func rawRecord(offset int64, body []byte) []byte {
	h := testkafka.Batch{First: offset, ProducerID: -1}.Encode()
	binary.BigEndian.PutUint32(h[57:], 1)
	rec := binary.AppendVarint(nil, int64(len(body)))
	return testkafka.Seal(append(append(h, rec...), body...))
}

// corruptBatches are batches at offset 3 (ending at 3 or 4) that cannot
// be delivered, by name.
func corruptBatches() map[string]logOf {
	crc := testkafka.At(3, 3, 3).Encode()
	crc[len(crc)-1] ^= 1
	return map[string]logOf{
		"bad CRC":            {{3, 3, crc}},
		"varint overflow":    {{3, 3, rawRecord(3, []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1})}},
		"key length 2^62":    {{3, 3, rawRecord(3, append([]byte{0, 0, 0}, binary.AppendVarint(nil, 1<<62)...))}},
		"repeated offsets":   {{3, 4, testkafka.At(3, 4, 4, 3, 3).Encode()}},
		"offsets going back": {{3, 4, testkafka.At(3, 4, 3, 4, 3).Encode()}},
		"length past batch": {{3, 3, func() []byte {
			b := testkafka.At(3, 3, 3).Encode()
			b[61] = 0x7e // the record's length, 63: past the batch
			return testkafka.Seal(b)
		}()}},
	}
}

// twoPartitions serves partition 0 as good records 0..2, bad, then a
// good record past bad; partition 1 as ten good records.
func twoPartitions(bad logOf) testkafka.Serve {
	p0 := append(logOf{{0, 2, concatBatches(testkafka.At(0, 2, 0, 1, 2).Encode())}}, bad...)
	after := bad[len(bad)-1].last + 1
	p0 = append(p0, logOf{{after, after, testkafka.At(after, after, after).Encode()}}...)
	var p1 logOf
	for o := int64(0); o < 10; o++ {
		p1 = append(p1, logOf{{o, o, testkafka.At(o, o, o).Encode()}}...)
	}
	return func(p int32, offset int64) ([]byte, int64) {
		if p == 1 {
			return p1.from(offset), p1.end()
		}
		return p0.from(offset), p0.end()
	}
}

func concatBatches(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// sinkOffsets reads a --sink file: the offsets of each partition, in
// the order written.
func sinkOffsets(t *testing.T, path string) map[int32][]int64 {
	t.Helper()
	data := readFile(t, path)
	out := map[int32][]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var r struct {
			Partition int32 `json:"partition"`
			Offset    int64 `json:"offset"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("sink line %q: %v", line, err)
		}
		out[r.Partition] = append(out[r.Partition], r.Offset)
	}
	return out
}

// A corrupt batch (each of corruptBatches, e.g. repeated offsets inside a
// batch) is neither retried for ever as a broker-error (until-end and
// --fail-on-data-loss included) nor delivered: the partition stops before
// the batch, the other partition is read whole,
// one corrupt-batch event, and --until-end ends with exit 1 and one line
// naming the partition, the offset and what is wrong.
func TestWatchCorruptBatchStopsItsPartitionOnly(t *testing.T) {
	for name, bad := range corruptBatches() {
		t.Run(name, func(t *testing.T) {
			addr := scripted(t, "t", 2, twoPartitions(bad))
			sink := filepath.Join(t.TempDir(), "sink.jsonl")
			r := execKbatch(t, nil, "watch", "-b", addr, "-t", "t", "--reset", "earliest", "--no-tui", "--until-end",
				"--no-store", "--sink", sink, "--fail-on-data-loss")
			checkOneLine(t, r, exitFailure, []string{"t[0]", "offset 3", "-o t:0="})
			if strings.Contains(r.stdout, "broker-error") || strings.Count(r.stdout, `"code":"corrupt-batch"`) != 1 {
				t.Errorf("want one corrupt-batch event and no broker-error:\n%s", r.stdout)
			}
			got := sinkOffsets(t, sink)
			if fmt.Sprint(got[0]) != "[0 1 2]" || fmt.Sprint(got[1]) != "[0 1 2 3 4 5 6 7 8 9]" {
				t.Errorf("sink offsets %v, want partition 0's 0..2 and partition 1's 0..9, each once", got)
			}
		})
	}
}

// A seek past the corrupt batch is the way on: -o at start reads the
// partition from there.
func TestWatchSeekPastCorruptBatchReadsOn(t *testing.T) {
	bad := corruptBatches()["repeated offsets"] // [3, 4]
	addr := scripted(t, "t", 2, twoPartitions(bad))
	sink := filepath.Join(t.TempDir(), "sink.jsonl")
	r := execKbatch(t, nil, "watch", "-b", addr, "-t", "t", "--reset", "earliest", "-o", "t:0=5", "--no-tui", "--until-end",
		"--no-store", "--sink", sink)
	if r.code != exitOK || strings.Contains(r.stdout, "corrupt-batch") {
		t.Fatalf("exit %d, stderr %s\nstdout %s", r.code, r.stderr, r.stdout)
	}
	if got := sinkOffsets(t, sink); fmt.Sprint(got[0]) != "[5]" {
		t.Errorf("partition 0's offsets %v, want [5]", got[0])
	}
}

// Replay of a range over a corrupt batch ends with exit 1 (after its
// summary lines) naming the partition and the batch's offset; on stdout
// the records before the batch, none of it or after it.
func TestReplayCorruptBatchExitsNamingIt(t *testing.T) {
	for name, bad := range corruptBatches() {
		t.Run(name, func(t *testing.T) {
			addr := scripted(t, "t", 2, twoPartitions(bad))
			r := execKbatch(t, nil, "replay", "t:0:0-6", "-b", addr)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			last := lines[len(lines)-1]
			if r.code != exitFailure || !strings.HasPrefix(last, "kbatch: read t[0]: corrupt record batch at offset 3: ") ||
				strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			out := filepath.Join(t.TempDir(), "stdout.jsonl")
			if err := os.WriteFile(out, []byte(r.stdout), 0o600); err != nil {
				t.Fatal(err)
			}
			if got := sinkOffsets(t, out); fmt.Sprint(got[0]) != "[0 1 2]" {
				t.Errorf("offsets written %v, want [0 1 2]", got[0])
			}
		})
	}
}

// Compression bombs of every codec: one record of 4 MiB of zeros per
// batch, a few KiB on the wire. Under --max-record-bytes 1MiB the
// partition stops at the first, named with the flag that reads it; the
// other partition is read. With a limit above them, they are read.
func TestWatchCompressionBombs(t *testing.T) {
	for name, codec := range map[string]int8{
		"gzip": testkafka.CodecGzip, "snappy": testkafka.CodecSnappy, "xerial snappy": testkafka.XerialSnappy,
		"lz4": testkafka.CodecLZ4, "zstd": testkafka.CodecZstd,
	} {
		t.Run(name, func(t *testing.T) {
			bomb := testkafka.Bomb(codec, 0, 4<<20)
			var bombs logOf
			for o := int64(0); o < 4; o++ {
				b := append([]byte(nil), bomb...)
				binary.BigEndian.PutUint64(b, uint64(o))
				bombs = append(bombs, logOf{{o, o, testkafka.Seal(b)}}...)
			}
			addr := scripted(t, "t", 2, func(p int32, offset int64) ([]byte, int64) {
				if p == 1 {
					return testkafka.At(0, 1, 0, 1).Encode(), 2
				}
				return bombs.from(offset), bombs.end()
			})
			r := execKbatch(t, nil, "watch", "-b", addr, "-t", "t", "--reset", "earliest", "--no-tui", "--until-end",
				"--no-store", "--max-record-bytes", "1MiB")
			checkOneLine(t, r, exitFailure, []string{"t[0]", "offset 0", "too large", "--max-record-bytes"})
			if !strings.Contains(r.stdout, `"partition":1,"from":0,"until":2`) {
				t.Errorf("partition 1 not read:\n%s", r.stdout)
			}
			r = execKbatch(t, nil, "watch", "-b", addr, "-t", "t", "--reset", "earliest", "--no-tui", "--until-end",
				"--no-store", "--max-record-bytes", "5MiB")
			if got := partitionRead(t, r.stdout, 0); r.code != exitOK || got != "[0,4) 4 records" {
				var ranges []string
				for _, l := range strings.Split(r.stdout, "\n") {
					if strings.Contains(l, `"type":"batch"`) {
						ranges = append(ranges, l)
					}
				}
				sort.Strings(ranges)
				t.Errorf("under 5MiB: exit %d, stderr %s, batches %v", r.code, r.stderr, ranges)
			}
		})
	}
}

// partitionRead is what the acked batch lines of a watch's stdout read
// of partition p, in however many batches: "[from,until) N records" when
// their ranges follow each other.
func partitionRead(t *testing.T, stdout string, p int32) string {
	t.Helper()
	from, until, records := int64(-1), int64(-1), int64(0)
	for _, l := range strings.Split(stdout, "\n") {
		var b struct {
			Type, State string
			Ranges      []struct {
				Partition            int32
				From, Until, Records int64
			}
		}
		if json.Unmarshal([]byte(l), &b) != nil || b.Type != "batch" || b.State != "acked" {
			continue
		}
		for _, rg := range b.Ranges {
			if rg.Partition != p {
				continue
			}
			switch {
			case from < 0:
				from = rg.From
			case rg.From != until:
				return fmt.Sprintf("a gap: [%d,%d) then [%d,%d)", from, until, rg.From, rg.Until)
			}
			until, records = rg.Until, records+rg.Records
		}
	}
	return fmt.Sprintf("[%d,%d) %d records", from, until, records)
}

// A metadata answer of thousands of partitions: every one is started,
// and --until-end ends at once on empty partitions.
func TestWatchThousandsOfPartitions(t *testing.T) {
	const n = 3000
	addr := scripted(t, "wide", n, func(int32, int64) ([]byte, int64) { return nil, 0 })
	r := execKbatch(t, nil, "watch", "-b", addr, "-t", "wide", "--reset", "earliest", "--no-tui", "--until-end", "--no-store")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	start := strings.SplitN(r.stdout, "\n", 2)[0]
	if got := strings.Count(start, `"partition":`); got != n {
		t.Errorf("the start line names %d partitions, want %d", got, n)
	}
}

// --max-record-bytes, and a profile's max_record_bytes under it: the
// limit that refuses a bomb, a larger one that reads it, and values that
// are not sizes (exit 2, one line).
func TestMaxRecordBytesFromFlagAndProfile(t *testing.T) {
	bomb := testkafka.Bomb(testkafka.CodecZstd, 0, 2<<20)
	addr := scripted(t, "t", 1, func(_ int32, offset int64) ([]byte, int64) {
		if offset > 0 {
			return nil, 1
		}
		return bomb, 1
	})
	dir := t.TempDir()
	conf := writeFile(t, dir, "config.toml", fmt.Sprintf("[clusters.bombs]\nbrokers = [%q]\nmax_record_bytes = \"1MiB\"\n", addr), 0o600)
	bad := writeFile(t, dir, "bad.toml", fmt.Sprintf("[clusters.bombs]\nbrokers = [%q]\nmax_record_bytes = \"lots\"\n", addr), 0o600)
	watch := []string{"watch", "-t", "t", "--reset", "earliest", "--no-tui", "--until-end", "--no-store"}
	r := execKbatch(t, nil, append(watch, "--config", conf, "--cluster", "bombs")...)
	checkOneLine(t, r, exitFailure, []string{"offset 0", "too large", "more than 1MiB"})
	r = execKbatch(t, nil, append(watch, "--config", conf, "--cluster", "bombs", "--max-record-bytes", "3MiB")...)
	if r.code != exitOK {
		t.Errorf("--max-record-bytes 3MiB over the profile's 1MiB: exit %d, %s", r.code, r.stderr)
	}
	r = execKbatch(t, nil, append(watch, "--config", bad, "--cluster", "bombs")...)
	checkOneLine(t, r, exitUsage, []string{`max_record_bytes "lots"`})
	r = execKbatch(t, nil, append(watch, "-b", addr, "--max-record-bytes", "2GiB")...)
	checkOneLine(t, r, exitUsage, []string{`--max-record-bytes "2GiB": at most 1GiB`})
}
