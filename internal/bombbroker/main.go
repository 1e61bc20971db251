// Command bombbroker is a Kafka broker (kfake) whose topic "bombs" holds
// compression bombs, to measure what kbatch's memory does with them
// (docs/exit-codes-and-bad-input.md): partition 0 answers every fetch
// with -batches record batches from the offset asked, each one record of
// -size zero bytes compressed with -codec (a few KiB on the wire);
// partition 1 holds 10 ordinary records. It prints its address and serves
// until killed:
//
//	go run ./internal/bombbroker -codec zstd -batches 8 -size 256 &
//	/usr/bin/time -v kbatch watch -b ADDR -t bombs --reset earliest --no-tui --until-end --no-store --batches 2
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/kbatch-dev/kbatch/internal/testkafka"
)

func main() {
	codecName := flag.String("codec", "zstd", "gzip, snappy, xerial, lz4 or zstd")
	batches := flag.Int("batches", 8, "bomb batches in partition 0")
	size := flag.Int64("size", 256, "MiB of zeros in each bomb's one record")
	flag.Parse()
	codec, ok := map[string]int8{"gzip": testkafka.CodecGzip, "snappy": testkafka.CodecSnappy, "xerial": testkafka.XerialSnappy,
		"lz4": testkafka.CodecLZ4, "zstd": testkafka.CodecZstd}[*codecName]
	if !ok {
		fmt.Fprintf(os.Stderr, "bombbroker: unknown codec %q\n", *codecName)
		os.Exit(2)
	}
	// Every bomb is the same but for its offset: one is built, and the
	// others are it with another base offset, sealed again.
	bomb := testkafka.Bomb(codec, 0, *size<<20)
	at := func(o int64) []byte {
		b := append([]byte(nil), bomb...)
		for i := range 8 {
			b[i] = byte(o >> (56 - 8*i))
		}
		return testkafka.Seal(b)
	}
	fake, err := testkafka.NewScripted("bombs", 2, func(p int32, offset int64) ([]byte, int64) {
		if p == 1 {
			var out []byte
			for o := max(offset, 0); o < 10; o++ {
				out = append(out, testkafka.At(o, o, o).Encode()...)
			}
			return out, 10
		}
		var out []byte
		for o := max(offset, 0); o < int64(*batches); o++ {
			out = append(out, at(o)...)
		}
		return out, int64(*batches)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bombbroker:", err)
		os.Exit(1)
	}
	defer fake.Close()
	fmt.Println(fake.ListenAddrs()[0])
	fmt.Fprintf(os.Stderr, "bombbroker: %d %s batches of %d MiB each, %d bytes on the wire each\n", *batches, *codecName, *size, len(bomb))
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	<-stop
}
