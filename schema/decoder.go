package schema

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/kbatch-dev/kbatch/schema/avro"
	"github.com/twmb/franz-go/pkg/sr"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Options configure a Decoder. The zero value decodes nothing but local
// schemas (of which it has none): every framed record then says "no
// registry configured".
type Options struct {
	// RegistryURL is a Confluent-compatible schema registry, e.g.
	// http://host:8081 or Apicurio's http://host:8080/apis/ccompat/v7.
	RegistryURL string
	// Username and Password, when Username is set, go as HTTP basic auth;
	// else BearerToken, when set, as "Authorization: Bearer".
	Username, Password string
	BearerToken        string
	// TLS configures https registries (nil: Go's defaults).
	TLS *tls.Config
	// Timeout bounds one registry request (default 10s).
	Timeout time.Duration
	// CacheDir keeps fetched schemas on disk (a folder per registry URL,
	// files 0600, folders 0700) so a new Decoder does not refetch them.
	// Empty: memory only.
	CacheDir string
	// RetryAfter is how long a failed fetch is remembered before an id is
	// asked for again (default 30s): a down registry is not hammered.
	RetryAfter time.Duration
	// Local schemas, for topics without a registry.
	Local []Local
	// Ready, if set, is called after each background fetch of a schema id
	// ends, whether it worked or not, from the fetching goroutine: records
	// TryDecode left pending can now be decoded (or show their reason).
	Ready func(id int)
	// Event, if set, is called once per schema id and kind of problem
	// (fetch failed, schema does not compile, bytes do not decode), from
	// the goroutine that met it.
	Event func(Event)
}

// Local is a schema on disk for the keys or values of a topic.
// Exactly one of ProtoFile (with Message), DescriptorSet (with Message)
// and AvroFile is set.
type Local struct {
	Topic string // "" for every topic without a more specific entry
	Key   bool   // the keys, not the values
	// ProtoFile is a .proto file, found in ProtoPaths (or relative to the
	// working directory when ProtoPaths is empty); Message is the full
	// name of the message, e.g. shop.v1.Order.
	ProtoFile  string
	ProtoPaths []string
	// DescriptorSet is a serialized google.protobuf.FileDescriptorSet
	// (protoc --include_imports -o FILE, buf build -o FILE).
	DescriptorSet string
	Message       string
	// AvroFile is an .avsc file.
	AvroFile string
}

// Status says what became of one key or value.
type Status int

const (
	// NotFramed: no local schema applies and the bytes are not in the
	// Confluent wire format; show them as they are.
	NotFramed Status = iota
	// Decoded: JSON holds the meaning (Reason may still say the JSON does
	// not match its JSON Schema).
	Decoded
	// Pending: TryDecode started fetching the schema; ask again after
	// Options.Ready names the id.
	Pending
	// Failed: framed (or a local schema applies) but not decoded; Reason
	// says why in one line.
	Failed
)

func (s Status) String() string {
	switch s {
	case Decoded:
		return "decoded"
	case Pending:
		return "pending"
	case Failed:
		return "failed"
	}
	return "not framed"
}

// Result is the outcome of decoding one key or value.
type Result struct {
	Status Status
	JSON   string // compact JSON, when Decoded and Value is not set
	// Value is the decoded Avro key or value as Go values (its scalars
	// made by Room.Scalars when set), when DecodeValue decoded it (see
	// DecodeValue); JSON is then empty.
	Value any
	// Fields is the projected Avro record, when DecodeValue was asked for
	// some fields only (see DecodeValue); Value and JSON are then empty.
	Fields   []Field
	Format   Format // when known
	SchemaID int    // from the wire-format header; 0 for local schemas
	Subject  string // registry subject naming the id (topic-value first), if known
	Version  int    // the subject's version of the id, if known
	Local    string // the local schema file that decoded it
	Reason   string // one line: why it did not decode, or why the JSON is invalid
}

// EventKind classifies what an Event reports.
type EventKind int

const (
	// FetchFailed: the registry was unreachable, refused, or does not know
	// the id.
	FetchFailed EventKind = iota
	// SchemaInvalid: the registry's schema text does not compile.
	SchemaInvalid
	// BytesInvalid: a payload did not decode with its schema.
	BytesInvalid
)

// Event reports a problem once per schema id and kind; an outage of the
// whole registry (unreachable, server errors, refused credentials) once
// until it answers again, with SchemaID 0.
type Event struct {
	Kind     EventKind
	SchemaID int    // 0 for an outage and for local schemas
	Topic    string // the topic of the record that met it
	Message  string // one line, e.g. "schema id 7: not in the registry"
}

// Decoder decodes records. It is safe for concurrent use.
type Decoder struct {
	opts   Options
	reg    *registry
	local  map[localKey]*localSchema
	ctx    context.Context
	cancel context.CancelFunc

	sem chan struct{} // bounds concurrent fetches

	// compiled holds the entries of ids whose schema compiled (int ->
	// *entry): such an entry never changes and is never forgotten, so a
	// decode finds it without taking mu, which every goroutine of a
	// filter would otherwise queue on.
	compiled sync.Map

	mu        sync.Mutex
	ids       map[int]*entry
	reported  map[reportKey]bool
	downUntil time.Time     // the registry failed as a whole: no request before this
	down      *registryDown // why, while downUntil is ahead
}

// maxFetches bounds the registry requests in flight; maxFailedIDs bounds
// the failed ids remembered (hostile bytes can name any of 2^32 ids).
const (
	maxFetches   = 4
	maxFailedIDs = 4096
)

type localKey struct {
	topic string
	key   bool
}

type localSchema struct {
	file string
	c    *compiled
}

type reportKey struct {
	id   int
	kind EventKind
	what string // a local schema file, or "registry" for an outage
}

// entry is one schema id: fetched once, shared by every caller.
type entry struct {
	done   chan struct{} // closed when c or err is set
	c      *compiled
	vers   []sr.SubjectVersion
	err    error
	at     time.Time // when err was set
	outage bool      // err is the registry's as a whole, not this id's
}

// registryDown is a failure of the registry as a whole, met while
// fetching one schema id: it names that id, so that no other id's error
// carries its text as if that id had been asked.
type registryDown struct {
	url string // the registry URL, credentials hidden
	id  int    // the schema id whose fetch met the failure
	at  time.Time
	err error
}

// describe is one line: the registry, the id that failed, how long ago
// when age.
func (r *registryDown) describe(age bool) string {
	when := ""
	if age {
		when = " " + time.Since(r.at).Round(time.Second).String() + " ago"
	}
	return fmt.Sprintf("the registry at %s failed for schema id %d%s: %s", r.url, r.id, when, oneLine(r.err.Error(), 160))
}

// notAskedError is the error of an id the registry was not asked for
// because it was failing as a whole.
type notAskedError struct{ down *registryDown }

func (e notAskedError) Error() string { return "not looked up: " + e.down.describe(true) }

func (e notAskedError) Unwrap() error { return e.down.err }

// reasonFor is the one line saying why schema id failed: the id first,
// then what its own lookup met, or why there was none.
func reasonFor(id int, err error) string {
	var na notAskedError
	if errors.As(err, &na) {
		return fmt.Sprintf("schema id %d %s", id, oneLine(na.Error(), 240))
	}
	return fmt.Sprintf("schema id %d: %s", id, oneLine(err.Error(), 160))
}

// New builds a Decoder; it compiles the local schemas now and says which
// one is wrong. It does not contact the registry.
func New(opts Options) (*Decoder, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = 30 * time.Second
	}
	d := &Decoder{opts: opts, ids: map[int]*entry{}, reported: map[reportKey]bool{}, local: map[localKey]*localSchema{},
		sem: make(chan struct{}, maxFetches)}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	if u := strings.TrimRight(strings.TrimSpace(opts.RegistryURL), "/"); u != "" {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("registry URL %q: want http:// or https://", oneLine(u, 80))
		}
		reg, err := newRegistry(u, opts)
		if err != nil {
			return nil, err
		}
		d.reg = reg
	}
	for _, l := range opts.Local {
		ls, err := compileLocal(d.ctx, l)
		if err != nil {
			return nil, err
		}
		k := localKey{l.Topic, l.Key}
		if _, dup := d.local[k]; dup {
			return nil, fmt.Errorf("two local %s schemas for topic %q", keyOrValue(l.Key), l.Topic)
		}
		d.local[k] = ls
	}
	return d, nil
}

func keyOrValue(key bool) string {
	if key {
		return "key"
	}
	return "value"
}

// Close stops background fetches. Decoding after Close still works for
// schemas already fetched; others fail.
func (d *Decoder) Close() { d.cancel() }

// HasRegistry reports whether a registry URL was configured.
func (d *Decoder) HasRegistry() bool { return d.reg != nil }

// Decode decodes one key (isKey) or value of topic, waiting for the
// registry when the schema id is not cached yet (at most Options.Timeout
// per request). Use it for headless output; the screen uses TryDecode.
func (d *Decoder) Decode(topic string, isKey bool, b []byte) Result {
	return d.decode(topic, isKey, b, true, nil)
}

// DecodeValue is Decode for a program that reads the decoded values rather
// than shows them: an Avro key or value comes as Go values in
// Result.Value, without its JSON text (see avroValue for the values); any
// other format comes as JSON. only, when not nil, names the top-level
// fields of an Avro record to build: Result.Fields is then those fields,
// in room.Fields, and the others are skipped unbuilt. room (nil: none)
// is reused from one value to the next by one goroutine: what a Result
// holds is valid until room is used again, and with a room its strings
// may point into b, which must not change meanwhile (a record's bytes
// never do). Subject and Version are left empty: a program that filters
// does not show them.
func (d *Decoder) DecodeValue(topic string, isKey bool, b []byte, only []string, room *Room) Result {
	return d.decode(topic, isKey, b, true, &valueWant{only: only, room: room})
}

// valueWant asks decode for Go values instead of Avro text.
type valueWant struct {
	only []string
	room *Room
}

func (w *valueWant) roomOf() *Room {
	if w == nil {
		return nil
	}
	return w.room
}

// TryDecode is Decode that never waits: when the schema id is not cached
// it starts fetching it in the background and returns Pending; Options.Ready
// says when to ask again.
func (d *Decoder) TryDecode(topic string, isKey bool, b []byte) Result {
	return d.decode(topic, isKey, b, false, nil)
}

func (d *Decoder) decode(topic string, isKey bool, b []byte, wait bool, want *valueWant) Result {
	if ls := d.localFor(topic, isKey); ls != nil {
		return d.decodeLocal(topic, ls, b, want)
	}
	f, ok := ParseFrame(b)
	if !ok {
		return Result{Status: NotFramed}
	}
	res := Result{Status: Failed, SchemaID: f.ID}
	if d.reg == nil {
		res.Reason = fmt.Sprintf("schema id %d: no registry configured", f.ID)
		return res
	}
	var e *entry
	if room := want.roomOf(); room != nil && room.dec == d && room.id == f.ID {
		e = room.entry
	} else if c, ok := d.compiled.Load(f.ID); ok {
		e = c.(*entry)
		if room != nil {
			room.dec, room.id, room.entry = d, f.ID, e
		}
	} else if e = d.entryFor(f.ID); wait {
		select {
		case <-e.done:
		case <-d.ctx.Done():
			res.Reason = fmt.Sprintf("schema id %d: decoder closed", f.ID)
			return res
		}
	} else {
		select {
		case <-e.done:
		default:
			res.Status = Pending
			return res
		}
	}
	if e.err != nil {
		res.Reason = reasonFor(f.ID, e.err)
		if e.outage {
			d.report(reportKey{kind: FetchFailed, what: "registry"}, topic, d.outageMessage(f.ID, e.err))
		} else {
			d.report(reportKey{id: f.ID, kind: FetchFailed}, topic, res.Reason)
		}
		return res
	}
	res.Format = e.c.format
	if want == nil {
		res.Subject, res.Version = pickSubject(e.vers, topic, isKey)
	}
	val, fields, text, invalid, err := e.c.decodeAs(f.Payload, true, want)
	if err != nil {
		res.Reason = fmt.Sprintf("schema id %d: bytes do not decode: %s", f.ID, oneLine(err.Error(), 160))
		d.report(reportKey{id: f.ID, kind: BytesInvalid}, topic, res.Reason)
		return res
	}
	res.Status, res.JSON, res.Value, res.Fields, res.Reason = Decoded, text, val, fields, invalid
	return res
}

// entryFor returns the entry of id, starting its fetch when there is none
// or when the last one failed more than RetryAfter ago. While the registry
// as a whole is failing, new ids fail at once without a request.
func (d *Decoder) entryFor(id int) *entry {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.ids[id]
	if e != nil {
		select {
		case <-e.done:
			if e.err == nil || time.Since(e.at) < d.opts.RetryAfter {
				return e
			}
		default:
			return e
		}
	}
	if len(d.ids) >= maxFailedIDs {
		d.forgetFailedLocked()
	}
	e = &entry{done: make(chan struct{})}
	d.ids[id] = e
	if now := time.Now(); now.Before(d.downUntil) {
		e.err, e.at, e.outage = notAskedError{d.down}, now, true
		close(e.done)
		return e
	}
	go d.fetch(id, e)
	return e
}

func (d *Decoder) forgetFailedLocked() {
	for id, e := range d.ids {
		select {
		case <-e.done:
			if e.err != nil {
				delete(d.ids, id)
			}
		default:
		}
	}
}

// outage reports whether err is the registry's as a whole, not about one id.
func outage(err error) bool {
	var oe outageError
	return errors.As(err, &oe)
}

func (d *Decoder) fetch(id int, e *entry) {
	var c *compiled
	var vers []sr.SubjectVersion
	var err error
	isOutage := false
	select {
	case d.sem <- struct{}{}:
		d.mu.Lock()
		isDown, down := time.Now().Before(d.downUntil), d.down
		d.mu.Unlock()
		if isDown {
			err, isOutage = notAskedError{down}, true
		} else {
			c, vers, err = d.load(id)
			if err != nil && d.ctx.Err() != nil {
				err = errors.New("decoder closed")
			}
		}
		<-d.sem
	case <-d.ctx.Done():
		err = errors.New("decoder closed")
	}
	d.mu.Lock()
	if err != nil && !isOutage && outage(err) && d.ctx.Err() == nil {
		isOutage = true
		now := time.Now()
		d.downUntil, d.down = now.Add(d.opts.RetryAfter), &registryDown{url: d.reg.shownURL(), id: id, at: now, err: err}
	}
	if err == nil {
		// The registry answers again: a later outage is news.
		delete(d.reported, reportKey{kind: FetchFailed, what: "registry"})
	}
	d.mu.Unlock()
	// The event before the result: a caller that waits for the result
	// (e.done) finds the event already reported, whatever the scheduling.
	if err != nil {
		switch {
		case isOutage:
			d.report(reportKey{kind: FetchFailed, what: "registry"}, "", d.outageMessage(id, err))
		default:
			kind := FetchFailed
			var ce compileError
			if errors.As(err, &ce) {
				kind = SchemaInvalid
			}
			d.report(reportKey{id: id, kind: kind}, "", fmt.Sprintf("schema id %d: %s", id, oneLine(err.Error(), 160)))
		}
	}
	d.mu.Lock()
	e.c, e.vers, e.err, e.at, e.outage = c, vers, err, time.Now(), isOutage
	close(e.done)
	if err == nil {
		d.compiled.Store(id, e)
	}
	d.mu.Unlock()
	if d.opts.Ready != nil {
		d.opts.Ready(id)
	}
}

type compileError struct{ error }

func (e compileError) Unwrap() error { return e.error }

// load fetches and compiles id; a cached copy that no longer compiles is
// dropped and fetched again.
func (d *Decoder) load(id int) (*compiled, []sr.SubjectVersion, error) {
	for _, useDisk := range []bool{true, false} {
		f, fromDisk, err := d.reg.fetch(d.ctx, id, useDisk)
		if err != nil {
			return nil, nil, err
		}
		c, err := compileFetched(d.ctx, f)
		if err != nil {
			if fromDisk {
				d.reg.dropDisk(id)
				continue
			}
			return nil, nil, compileError{fmt.Errorf("schema does not compile: %w", err)}
		}
		if !fromDisk {
			d.reg.writeDisk(f)
		}
		return c, f.Versions, nil
	}
	return nil, nil, errors.New("unreachable")
}

// outageMessage is the one line of the event reporting an outage met by
// id: the failure of the id that asked, never one id's text under another.
func (d *Decoder) outageMessage(id int, err error) string {
	var na notAskedError
	if errors.As(err, &na) {
		return na.down.describe(false)
	}
	return (&registryDown{url: d.reg.shownURL(), id: id, at: time.Now(), err: err}).describe(false)
}

func (d *Decoder) report(k reportKey, topic, msg string) {
	if d.opts.Event == nil {
		return
	}
	d.mu.Lock()
	seen := d.reported[k]
	d.reported[k] = true
	d.mu.Unlock()
	if !seen {
		d.opts.Event(Event{Kind: k.kind, SchemaID: k.id, Topic: topic, Message: msg})
	}
}

// pickSubject names the subject of an id for topic: the TopicNameStrategy
// subject (topic-value, topic-key) when it is one of them, else the first.
func pickSubject(vs []sr.SubjectVersion, topic string, isKey bool) (string, int) {
	want := topic + "-" + keyOrValue(isKey)
	for _, v := range vs {
		if v.Subject == want {
			return v.Subject, v.Version
		}
	}
	if len(vs) > 0 {
		return vs[0].Subject, vs[0].Version
	}
	return "", 0
}

func (d *Decoder) localFor(topic string, isKey bool) *localSchema {
	if len(d.local) == 0 {
		return nil
	}
	if ls := d.local[localKey{topic, isKey}]; ls != nil {
		return ls
	}
	return d.local[localKey{"", isKey}]
}

// decodeLocal decodes with a local schema: the bytes as they are, or, when
// they are in the wire format and do not decode as they are, the payload
// after the header (a registry-framed topic read without the registry).
func (d *Decoder) decodeLocal(topic string, ls *localSchema, b []byte, want *valueWant) Result {
	res := Result{Status: Failed, Format: ls.c.format, Local: ls.file}
	val, fields, text, invalid, err := ls.c.decodeAs(b, false, want)
	if err != nil {
		if f, ok := ParseFrame(b); ok {
			if v2, f2, t2, inv2, err2 := ls.c.decodeAs(f.Payload, true, want); err2 == nil {
				res.SchemaID = f.ID
				val, fields, text, invalid, err = v2, f2, t2, inv2, nil
			}
		}
	}
	if err != nil {
		res.Reason = fmt.Sprintf("%s: bytes do not decode: %s", filepath.Base(ls.file), oneLine(err.Error(), 160))
		d.report(reportKey{kind: BytesInvalid, what: ls.file}, topic, res.Reason)
		return res
	}
	res.Status, res.JSON, res.Value, res.Fields, res.Reason = Decoded, text, val, fields, invalid
	return res
}

func compileLocal(ctx context.Context, l Local) (*localSchema, error) {
	n := 0
	for _, s := range []string{l.ProtoFile, l.DescriptorSet, l.AvroFile} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, fmt.Errorf("local %s schema for topic %q: give one of a .proto file, a descriptor set, an .avsc file", keyOrValue(l.Key), l.Topic)
	}
	switch {
	case l.AvroFile != "":
		b, err := os.ReadFile(l.AvroFile)
		if err != nil {
			return nil, err
		}
		s, err := new(avro.Names).Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.AvroFile, err)
		}
		return &localSchema{file: l.AvroFile, c: &compiled{format: Avro, avro: s}}, nil
	case l.ProtoFile != "":
		if l.Message == "" {
			return nil, fmt.Errorf("%s: name the message (e.g. shop.v1.Order)", l.ProtoFile)
		}
		paths := l.ProtoPaths
		file := l.ProtoFile
		if len(paths) == 0 {
			paths = []string{filepath.Dir(file)}
			file = filepath.Base(file)
		} else if rel, ok := relativeTo(file, paths); ok {
			file = rel
		}
		fd, err := compileProto(ctx, file, &protocompile.SourceResolver{ImportPaths: paths})
		if err != nil {
			return nil, err
		}
		md, err := findMessage(fd, l.Message)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.ProtoFile, err)
		}
		return &localSchema{file: l.ProtoFile, c: &compiled{format: Protobuf, msg: md, types: typesFor(fd)}}, nil
	default:
		if l.Message == "" {
			return nil, fmt.Errorf("%s: name the message (e.g. shop.v1.Order)", l.DescriptorSet)
		}
		b, err := os.ReadFile(l.DescriptorSet)
		if err != nil {
			return nil, err
		}
		var set descriptorpb.FileDescriptorSet
		if err := proto.Unmarshal(b, &set); err != nil {
			return nil, fmt.Errorf("%s: not a FileDescriptorSet: %w", l.DescriptorSet, err)
		}
		addWellKnown(&set)
		files, err := protodesc.NewFiles(&set)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", l.DescriptorSet, err)
		}
		desc, err := files.FindDescriptorByName(protoreflect.FullName(l.Message))
		if err != nil {
			return nil, fmt.Errorf("%s: no message %s", l.DescriptorSet, l.Message)
		}
		md, ok := desc.(protoreflect.MessageDescriptor)
		if !ok {
			return nil, fmt.Errorf("%s: %s is not a message", l.DescriptorSet, l.Message)
		}
		return &localSchema{file: l.DescriptorSet, c: &compiled{format: Protobuf, msg: md, types: dynamicpb.NewTypes(files)}}, nil
	}
}

// addWellKnown adds the google/protobuf files a set imports but does not
// hold (protoc without --include_imports leaves them out).
func addWellKnown(set *descriptorpb.FileDescriptorSet) {
	have := map[string]bool{}
	for _, f := range set.File {
		have[f.GetName()] = true
	}
	var extra []*descriptorpb.FileDescriptorProto
	var add func(name string)
	add = func(name string) {
		if have[name] || !strings.HasPrefix(name, "google/protobuf/") {
			return
		}
		fd, err := protoregistry.GlobalFiles.FindFileByPath(name)
		if err != nil {
			return
		}
		have[name] = true
		imps := fd.Imports()
		for i := range imps.Len() {
			add(imps.Get(i).Path())
		}
		extra = append(extra, protodesc.ToFileDescriptorProto(fd))
	}
	for _, f := range set.File {
		for _, dep := range f.Dependency {
			add(dep)
		}
	}
	set.File = append(extra, set.File...)
}

// relativeTo makes file relative to the first import path holding it, so
// protocompile finds it; a file already relative to one stays as it is.
func relativeTo(file string, paths []string) (string, bool) {
	if !filepath.IsAbs(file) {
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join(p, file)); err == nil {
				return file, true
			}
		}
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", false
	}
	for _, p := range paths {
		ap, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(ap, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel), true
		}
	}
	return "", false
}

func findMessage(fd protoreflect.FileDescriptor, name string) (protoreflect.MessageDescriptor, error) {
	var walk func(ms protoreflect.MessageDescriptors) protoreflect.MessageDescriptor
	walk = func(ms protoreflect.MessageDescriptors) protoreflect.MessageDescriptor {
		for i := range ms.Len() {
			m := ms.Get(i)
			if string(m.FullName()) == name {
				return m
			}
			if r := walk(m.Messages()); r != nil {
				return r
			}
		}
		return nil
	}
	if md := walk(fd.Messages()); md != nil {
		return md, nil
	}
	// A message of an imported file.
	imps := fd.Imports()
	for i := range imps.Len() {
		if md, err := findMessage(imps.Get(i).FileDescriptor, name); err == nil {
			return md, nil
		}
	}
	return nil, fmt.Errorf("no message %s", name)
}
