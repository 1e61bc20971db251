// Package demo runs the embedded Kafka cluster behind `kbatch demo`: an
// in-process franz-go kfake cluster listening on 127.0.0.1 only, three
// topics with a ready-made backlog, a schema registry (franz-go's srfake,
// also on 127.0.0.1) for the Avro topic, and a generator that keeps writing
// realistic, bursty traffic so every pane of the UI has something to show.
//
// Topics:
//
//   - "events" (2 partitions): user activity as JSON, keyed "user-N", with
//     "source" and "trace-id" headers.
//   - "sensor-data" (3 partitions): sensor readings as JSON, keyed by sensor
//     id. About one record in 500 is odd on purpose: a null key, a binary
//     (non-UTF-8) value, or a hostile value and header carrying terminal
//     escape sequences (ESC [2J, OSC 52, OSC 0, C1 CSI, a U+202E bidi
//     override), so the UI's escaping is visible in the demo.
//   - "orders" (2 partitions): shop orders as Avro in the Confluent wire
//     format (nested items, decimals, enums, a timestamp, an optional
//     coupon), keyed "o-N", their schema registered as "orders-value" in
//     the registry at Demo.RegistryURL; one order for every ten records of
//     the other two topics.
//
// The traffic averages Options.Rate records per second across "events" and
// "sensor-data" (plus a tenth of that in orders),
// in steady stretches broken by short bursts at 5-10 times that rate and by
// idle gaps of a few seconds with no records at all. Given a nonzero seed,
// the records and their order are reproducible; only their timestamps (and
// the moment a record is sent) depend on the clock.
//
// The package writes nothing to stdout or stderr: diagnostics go to
// Options.Logf, because the terminal belongs to the UI.
package demo
