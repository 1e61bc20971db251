// Package consumer is kbatch's direct stream: it assigns partitions itself
// (no consumer group), reads them with Fetch requests of its own (one
// multi-partition request per leader broker, built and decoded by
// kafka/), cuts
// what it reads into batches of per-partition ranges [From, Until), writes
// each batch ahead to the offsets store as planned, hands it to processing,
// and marks it acked, advancing the stored next offsets, only after
// processing succeeded.
//
// The stream knows nothing of screens: it reports through one typed event
// channel, which it closes exactly once, and takes commands (pause, resume,
// seek, ack) through methods that are safe to call from any goroutine.
//
// The Kafka client, requests and decoding are kafka/'s; this package
// decides what to fetch when, and what an answer means for the stream.
package consumer
