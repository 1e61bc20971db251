package schema

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bufbuild/protocompile"
	"github.com/kbatch-dev/kbatch/schema/avro"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Format names the schema language of a decoded record.
type Format string

// The formats a Decoder reads.
const (
	Avro     Format = "avro"
	Protobuf Format = "protobuf"
	JSON     Format = "json"
)

// compiled is a schema ready to decode payloads.
type compiled struct {
	types  *dynamicpb.Types // Protobuf: resolves Any and extensions to the schema's messages
	format Format
	avro   *avro.Schema
	proto  protoreflect.FileDescriptor    // registry Protobuf: messages picked by index
	msg    protoreflect.MessageDescriptor // local Protobuf: the one message
	json   *jsonChecker                   // JSON Schema: nil for a draft kbatch does not check
}

func formatOf(schemaType string) (Format, error) {
	switch strings.ToUpper(schemaType) {
	case "", "AVRO":
		return Avro, nil
	case "PROTOBUF":
		return Protobuf, nil
	case "JSON":
		return JSON, nil
	}
	return "", fmt.Errorf("schema type %q not supported", oneLine(schemaType, 40))
}

// compileFetched compiles a registry schema with its references.
func compileFetched(ctx context.Context, f *fetched) (*compiled, error) {
	format, err := formatOf(f.Type)
	if err != nil {
		return nil, err
	}
	switch format {
	case Avro:
		var names avro.Names
		for _, r := range f.Refs {
			if _, err := names.Parse([]byte(r.Schema)); err != nil {
				return nil, fmt.Errorf("Avro reference %q: %w", r.Name, err)
			}
		}
		s, err := names.Parse([]byte(f.Schema))
		if err != nil {
			return nil, fmt.Errorf("Avro schema: %w", err)
		}
		return &compiled{format: Avro, avro: s}, nil
	case Protobuf:
		files := map[string]string{}
		for _, r := range f.Refs {
			files[r.Name] = r.Schema
		}
		main := "kbatch-schema-" + strconv.Itoa(f.ID) + ".proto"
		for files[main] != "" {
			main = "_" + main
		}
		files[main] = f.Schema
		fd, err := compileProto(ctx, main, registryProtoResolver(files))
		if err != nil {
			return nil, err
		}
		return &compiled{format: Protobuf, proto: fd, types: typesFor(fd)}, nil
	default:
		c, err := compileJSONSchema(f.ID, f.Schema, f.Refs)
		if err != nil {
			return nil, err
		}
		return &compiled{format: JSON, json: c}, nil
	}
}

func resolveURL(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil || !b.IsAbs() {
		return ""
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	return b.ResolveReference(r).String()
}

// registryProtoResolver serves the schema texts of one id by import
// path. Registries hold Protobuf schemas as .proto text or, as Confluent's
// Python serializer registers them, as a base64 FileDescriptorProto.
func registryProtoResolver(files map[string]string) protocompile.Resolver {
	return protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
		text, ok := files[path]
		if !ok {
			return protocompile.SearchResult{}, fmt.Errorf("%s: not among the schema's references", path)
		}
		if fdp := binaryDescriptor(text); fdp != nil {
			fdp.Name = proto.String(path)
			return protocompile.SearchResult{Proto: fdp}, nil
		}
		return protocompile.SearchResult{Source: strings.NewReader(text)}, nil
	})
}

// binaryDescriptor reads text as a base64 FileDescriptorProto, or nil.
func binaryDescriptor(text string) *descriptorpb.FileDescriptorProto {
	t := strings.TrimSpace(text)
	if t == "" || strings.ContainsAny(t, " \n\t;{") {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(t)
	if err != nil {
		return nil
	}
	var fdp descriptorpb.FileDescriptorProto
	if proto.Unmarshal(b, &fdp) != nil {
		return nil
	}
	fillJSONNames(fdp.MessageType, fdp.Extension)
	return &fdp
}

// fillJSONNames gives every field without a json_name the one protoc
// derives from its name. Descriptors from Python's serialized_pb carry
// none, and protocompile reads a missing json_name as a custom "" that
// then conflicts between fields.
func fillJSONNames(msgs []*descriptorpb.DescriptorProto, exts []*descriptorpb.FieldDescriptorProto) {
	for _, f := range exts {
		if f.JsonName == nil {
			f.JsonName = proto.String(jsonName(f.GetName()))
		}
	}
	for _, m := range msgs {
		for _, f := range m.Field {
			if f.JsonName == nil {
				f.JsonName = proto.String(jsonName(f.GetName()))
			}
		}
		fillJSONNames(m.NestedType, m.Extension)
	}
}

// jsonName is protoc's default JSON name: underscores dropped, the letter
// after each one upper-cased.
func jsonName(name string) string {
	var b strings.Builder
	up := false
	for _, c := range name {
		switch {
		case c == '_':
			up = true
		case up && 'a' <= c && c <= 'z':
			b.WriteRune(c - 'a' + 'A')
			up = false
		default:
			b.WriteRune(c)
			up = false
		}
	}
	return b.String()
}

func compileProto(ctx context.Context, path string, r protocompile.Resolver) (protoreflect.FileDescriptor, error) {
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(r)}
	files, err := c.Compile(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("Protobuf schema: %w", err)
	}
	return files[0], nil
}

// protoMessage picks the message that a Confluent index path names:
// the first index among the file's top-level messages, each next one
// among the nested messages of the one before.
func protoMessage(fd protoreflect.FileDescriptor, path []int) (protoreflect.MessageDescriptor, error) {
	var md protoreflect.MessageDescriptor
	msgs := fd.Messages()
	for _, i := range path {
		if i >= msgs.Len() {
			return nil, fmt.Errorf("message index %v not in the schema", path)
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	if md == nil {
		return nil, errIndexes
	}
	return md, nil
}

// typesFor is the message and extension types of fd and every file it
// imports, so an Any holding one of them shows as JSON.
func typesFor(fd protoreflect.FileDescriptor) *dynamicpb.Types {
	files := &protoregistry.Files{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if _, err := files.FindFileByPath(f.Path()); err == nil {
			return
		}
		if files.RegisterFile(f) != nil {
			return
		}
		imps := f.Imports()
		for i := range imps.Len() {
			add(imps.Get(i).FileDescriptor)
		}
	}
	add(fd)
	return dynamicpb.NewTypes(files)
}

func protoToJSON(md protoreflect.MessageDescriptor, types *dynamicpb.Types, payload []byte) (string, error) {
	m := dynamicpb.NewMessage(md)
	// AllowPartial: a proto2 message missing a required field still shows.
	if err := (proto.UnmarshalOptions{Resolver: types, AllowPartial: true}).Unmarshal(payload, m); err != nil {
		return "", fmt.Errorf("Protobuf %s: %w", md.FullName(), err)
	}
	b, err := (protojson.MarshalOptions{UseProtoNames: true, Resolver: types, AllowPartial: true}).Marshal(m)
	if err != nil {
		return "", fmt.Errorf("Protobuf %s: %w", md.FullName(), err)
	}
	return safeJSON(b)
}

// decodeAs is decode, or, when want is set and the format is Avro, the
// payload as Go values (avroValue) without text: val, or fields when want
// names fields.
func (c *compiled) decodeAs(payload []byte, framed bool, want *valueWant) (val any, fields []Field, text, invalid string, err error) {
	if want == nil || c.format != Avro {
		text, invalid, err = c.decode(payload, framed)
		return nil, nil, text, invalid, err
	}
	val, fields, err = avroValue(c.avro, payload, want.only, want.room)
	if err != nil {
		return nil, nil, "", "", fmt.Errorf("Avro %s: %w", avroName(c.avro), err)
	}
	return val, fields, "", "", nil
}

func avroName(s *avro.Schema) string {
	return s.TypeName()
}

// decode turns a payload (after the wire-format header) into JSON. A JSON
// Schema payload that does not validate still returns its JSON, with
// invalid set to why.
func (c *compiled) decode(payload []byte, framed bool) (text, invalid string, err error) {
	switch c.format {
	case Avro:
		text, err = avroJSON(c.avro, payload)
		if err != nil {
			return "", "", fmt.Errorf("Avro %s: %w", avroName(c.avro), err)
		}
		return text, "", nil
	case Protobuf:
		md := c.msg
		if framed || md == nil {
			path, rest, err := parseIndexes(payload)
			if err != nil {
				return "", "", err
			}
			payload = rest
			if md == nil {
				if md, err = protoMessage(c.proto, path); err != nil {
					return "", "", err
				}
			}
		}
		text, err = protoToJSON(md, c.types, payload)
		return text, "", err
	default:
		reason, err := c.json.check(payload)
		if err != nil {
			return "", "", err
		}
		text, err = safeJSON(payload)
		if err != nil {
			return "", "", err
		}
		return text, reason, nil
	}
}

// safeJSON compacts valid JSON text and escapes what a terminal could
// act on: DEL, C1 controls, U+2028/U+2029, and bytes that are not UTF-8
// (only strings can hold them in valid JSON, so escaping keeps it valid).
func safeJSON(b []byte) (string, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return "", fmt.Errorf("not JSON: %w", err)
	}
	c := buf.Bytes()
	clean := true
	for _, x := range c {
		if x >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return string(c), nil
	}
	var out strings.Builder
	for i := 0; i < len(c); {
		r, n := utf8.DecodeRune(c[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out.WriteString(`\ufffd`)
		case r == 0x7f, r >= 0x80 && r < 0xa0, r == 0x2028, r == 0x2029:
			fmt.Fprintf(&out, `\u%04x`, r)
		default:
			out.Write(c[i : i+n])
		}
		i += n
	}
	return out.String(), nil
}
