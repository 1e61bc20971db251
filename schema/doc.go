// Package schema decodes record keys and values that carry a schema:
// registry-framed records (the Confluent wire format: a zero byte, a
// 4-byte big-endian schema id, then the payload; Protobuf payloads start
// with message indexes) through a Confluent-compatible schema registry
// (asked with franz-go's sr client), and records written with a local
// schema (.proto with a message name, a FileDescriptorSet, or .avsc) for
// topics without a registry.
//
// Contract:
//
//   - Formats: Avro (schema/avro: kbatch's own, on the standard library;
//     a registry schema's references resolve through one name table),
//     Protobuf (bufbuild/protocompile,
//     the schema's references fetched too; message indexes pick nested
//     messages; dynamic messages to JSON with protojson, proto field
//     names), JSON Schema (google/jsonschema-go, draft-07 and 2020-12,
//     and draft-04, draft-06 and 2019-09 translated into those with the
//     same meaning: the JSON is shown, and Result.Reason says when it
//     does not validate, at the place in the schema as written; a schema
//     of another draft, or with references of both draft-04/06/07 and
//     2019-09/2020-12, shows its values unchecked).
//   - Output: compact JSON text, valid JSON for every input, with
//     control, C1 and invalid UTF-8 characters escaped, so it can be shown
//     on a terminal. The raw bytes are never changed: callers keep them.
//   - One fetch per schema id: concurrent callers share it; the compiled
//     schema stays in memory, and on disk under Options.CacheDir (0600
//     files in 0700 folders, a folder per registry URL) so a new Decoder
//     does not refetch. A failed fetch is remembered for
//     Options.RetryAfter, then tried again; Options.Event hears of each
//     schema id's problem once.
//   - Decode waits for the registry (headless output); TryDecode never
//     waits: it returns Pending and fetches in the background, then calls
//     Options.Ready with the id.
//   - Hostile bytes and hostile registry answers end in Status Failed
//     with a one-line Reason, never in a panic, a hang or an allocation
//     larger than the payload allows. A registry's JSON Schema cannot make
//     kbatch load files or URLs.
//
// schema imports nothing of kbatch; packages above it (the screen, the
// CLI, replay) wire it in.
package schema
