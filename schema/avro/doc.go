// Package avro is kbatch's Avro: schemas parsed from their JSON text
// (Avro 1.11 and 1.12: primitives, records, enums, arrays, maps, unions,
// fixed, named types with their namespaces, references by name, logical
// types), a Reader of the binary encoding over one payload, and a Writer.
//
// kbatch walks schemas itself to turn a payload into JSON text or Go
// values, so all it needs of an Avro library is the schema tree and the
// primitive reads. Libraries that give a schema tree decode through
// reflection code (modern-go/reflect2) whose types, embedding
// reflect.Type, keep a method that looks methods up by name reachable:
// the Go linker then keeps every exported method of every type in an
// interface, megabytes of the binary mapped at every start. goavro gives
// no schema tree. This package is on the standard library only.
//
// Contract:
//
//   - Parse accepts what the specification accepts and rejects, with one
//     line, bad names, duplicate names, duplicate field names and enum
//     symbols, unions directly in unions, two union branches of one
//     unnamed type (a logical type makes another), unknown type names,
//     and schemas nested deeper than MaxDepth. A logical type invalid for
//     its base type is ignored, as the specification says. Field defaults
//     are kept as parsed JSON and not checked against the field's type.
//   - Names resolve as Java's Avro does within one schema (the enclosing
//     namespace, then the null namespace; a dotted name as it is; a
//     namespace "" is the null namespace) and to names a Names table
//     holds from earlier parses, so a registry schema's references
//     resolve; a schema cannot define again a name of the table. An
//     alias resolves too, but never hides a name. A named type cannot be
//     called after a primitive type.
//   - A Reader never allocates for a length or count it reads: every
//     length is checked against the bytes left of the payload first, a
//     varint longer than its type is an error, and an error sticks.
package avro
