package spark_test

import (
	"fmt"

	"github.com/kbatch-dev/kbatch/offsets/spark"
)

// A checkpoint's committed offsets exported for a new Spark query: partition
// 2 was added to the topic after the checkpoint was written, so it is listed
// at -2 (earliest), as Spark requires every partition to be listed.
func ExampleStartingOffsetsJSON() {
	next, err := spark.ParseOffsetJSON([]byte(`{"events":{"1":120,"0":97}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(spark.StartingOffsetsJSON(next, map[string]int32{"events": 3}))
	// Output: {"events":{"0":97,"1":120,"2":-2}}
}

// The end of a batch query that reads up to the committed offsets and to the
// high watermark of a partition the checkpoint does not know.
func ExampleEndingOffsetsJSON() {
	end, err := spark.ParseOffsetJSON([]byte(`{"events":{"0":97}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(spark.EndingOffsetsJSON(end, map[string]int32{"events": 2}))
	// Output: {"events":{"0":97,"1":-1}}
}

// A query reading a file source and a Kafka topic: only the Kafka line has
// Kafka offsets.
func ExampleParseOffsetLog() {
	log, err := spark.ParseOffsetLog([]byte("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1480981499528}\n{\"logOffset\":345}\n{\"topic-0\":{\"0\":1}}"))
	if err != nil {
		panic(err)
	}
	for _, s := range log.Sources {
		fmt.Println(s.Index, s.Kafka != nil, s.Kafka.Partitions())
	}
	t, _ := log.BatchTime()
	fmt.Println(t)
	// Output:
	// 0 false []
	// 1 true [topic-0[0]]
	// 2016-12-05 23:44:59.528 +0000 UTC
}
