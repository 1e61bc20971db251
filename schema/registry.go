package schema

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Limits on what a registry may send: a schema and its references are
// text of a few KiB in practice.
const (
	maxResponse = 8 << 20
	maxRefs     = 256
	maxRefDepth = 32
)

// fetched is one schema id as the registry describes it, with every
// reference resolved, dependencies before their dependants. It is what the
// disk cache stores.
type fetched struct {
	ID       int              `json:"id"`
	Type     string           `json:"schemaType,omitempty"`
	Schema   string           `json:"schema"`
	Refs     []namedSchema    `json:"refs,omitempty"`
	Versions []subjectVersion `json:"versions,omitempty"`
}

type namedSchema struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
	Type    string `json:"schemaType,omitempty"`
	Schema  string `json:"schema"`
}

type subjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

type reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

type schemaResponse struct {
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType"`
	References []reference `json:"references"`
}

// httpError is a registry answer other than 200.
type httpError struct {
	Status int
	Text   string
}

func (e *httpError) Error() string {
	if e.Text != "" {
		return fmt.Sprintf("registry answered %d: %s", e.Status, e.Text)
	}
	return fmt.Sprintf("registry answered %d", e.Status)
}

// outageError marks a failure of the registry as a whole (unreachable,
// server errors, refused credentials, answers that are not its API), as
// opposed to one about a schema id.
type outageError struct{ error }

func (e outageError) Unwrap() error { return e.error }

// errNotFound marks an id the registry does not know.
var errNotFound = errors.New("not in the registry")

type registry struct {
	base   string // without a trailing slash
	client *http.Client
	auth   string // Authorization header value, or ""
	dir    string // disk cache folder for this registry, or ""
}

func (r *registry) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	if r.auth != "" {
		req.Header.Set("Authorization", r.auth)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is known to the user; keep the line short
		}
		return outageError{fmt.Errorf("registry unreachable: %w", err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return outageError{fmt.Errorf("registry unreachable: %w", err)}
	}
	if len(body) > maxResponse {
		return outageError{fmt.Errorf("registry answer over %d bytes", maxResponse)}
	}
	if resp.StatusCode == http.StatusNotFound {
		return errNotFound
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(body, &e)
		he := &httpError{Status: resp.StatusCode, Text: oneLine(e.Message, 120)}
		if he.Status >= 500 || he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden {
			return outageError{he}
		}
		return he
	}
	if err := json.Unmarshal(body, v); err != nil {
		return outageError{fmt.Errorf("registry answer is not JSON: %w", err)}
	}
	return nil
}

// shownURL is the registry URL as messages show it: a password in it is
// hidden.
func (r *registry) shownURL() string {
	if u, err := url.Parse(r.base); err == nil {
		return u.Redacted()
	}
	return oneLine(r.base, 80)
}

// fetch reads schema id with its references and the subjects naming it,
// from the disk cache when useDisk and it holds the id.
func (r *registry) fetch(ctx context.Context, id int, useDisk bool) (f *fetched, fromDisk bool, err error) {
	if useDisk {
		if f := r.readDisk(id); f != nil {
			return f, true, nil
		}
	}
	var top schemaResponse
	if err := r.get(ctx, "/schemas/ids/"+strconv.Itoa(id), &top); err != nil {
		return nil, false, err
	}
	f = &fetched{ID: id, Type: top.SchemaType, Schema: top.Schema}
	seen := map[string]bool{}
	if err := r.resolve(ctx, top.References, f, seen, 0); err != nil {
		return nil, false, err
	}
	// The subjects and versions naming this id; a registry without the
	// endpoint still decodes, only without a subject to show.
	var vs []subjectVersion
	if err := r.get(ctx, "/schemas/ids/"+strconv.Itoa(id)+"/versions", &vs); err == nil {
		f.Versions = vs
	}
	return f, false, nil
}

func (r *registry) resolve(ctx context.Context, refs []reference, f *fetched, seen map[string]bool, depth int) error {
	if depth > maxRefDepth {
		return errors.New("schema references nested too deep")
	}
	for _, ref := range refs {
		key := ref.Subject + "\x00" + strconv.Itoa(ref.Version)
		if seen[key] {
			continue
		}
		seen[key] = true
		if len(seen) > maxRefs {
			return fmt.Errorf("more than %d schema references", maxRefs)
		}
		var s schemaResponse
		v := strconv.Itoa(ref.Version)
		if ref.Version <= 0 {
			v = "latest"
		}
		err := r.get(ctx, "/subjects/"+url.PathEscape(ref.Subject)+"/versions/"+v, &s)
		if errors.Is(err, errNotFound) {
			return fmt.Errorf("reference %q (subject %q version %d) not in the registry", ref.Name, ref.Subject, ref.Version)
		}
		if err != nil {
			return err
		}
		if err := r.resolve(ctx, s.References, f, seen, depth+1); err != nil {
			return err
		}
		f.Refs = append(f.Refs, namedSchema{Name: ref.Name, Subject: ref.Subject, Version: ref.Version, Type: s.SchemaType, Schema: s.Schema})
	}
	return nil
}

// cacheDirFor is the disk cache folder of one registry URL under root:
// ids are per registry, so each URL gets its own folder.
func cacheDirFor(root, base string) string {
	h := sha256.Sum256([]byte(base))
	return filepath.Join(root, hex.EncodeToString(h[:8]))
}

func (r *registry) readDisk(id int) *fetched {
	if r.dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(r.dir, strconv.Itoa(id)+".json"))
	if err != nil || len(b) > maxResponse*4 {
		return nil
	}
	var f fetched
	if json.Unmarshal(b, &f) != nil || f.ID != id {
		return nil
	}
	return &f
}

// writeDisk stores f (0600 in a 0700 folder) through a rename, so a reader
// never sees half a file. Failing to write only costs a refetch later.
func (r *registry) writeDisk(f *fetched) {
	if r.dir == "" {
		return
	}
	if os.MkdirAll(r.dir, 0o700) != nil {
		return
	}
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(r.dir, ".tmp-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(r.dir, strconv.Itoa(f.ID)+".json")) != nil {
		os.Remove(tmp.Name())
	}
}

// dropDisk removes a cached id whose text no longer compiles.
func (r *registry) dropDisk(id int) {
	if r.dir != "" {
		os.Remove(filepath.Join(r.dir, strconv.Itoa(id)+".json"))
	}
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}
