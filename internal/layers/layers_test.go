// Package layers holds the test of kbatch's package layering (docs/design.md §5):
// dependencies point one way, and each outside library that owns a
// resource is imported by one package only.
package layers

import (
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/kbatch-dev/kbatch"

// rank orders kbatch's packages from the leaves up (docs/design.md §5: record,
// offsets ← kafka ← consumer ← replay ← sparkwatch ← tui ← cli ← main).
// A package may import only packages of a lower rank. A new package must
// be placed here, so that its place in the house is a decision.
var rank = map[string]int{
	// atomicfile is the one writer of files that must be complete or
	// absent; it is on the standard library only, below every package.
	"atomicfile": -1,
	// schema/avro is kbatch's Avro (schemas, reader, writer), on the
	// standard library only; schema decodes with it and the demo encodes.
	"schema/avro": -1,
	"record":      0,
	"schema":      0,
	"offsets":     1,
	// filter is the one expression language over records (CEL), on
	// record and schema; replay's and the screen's filters use it.
	"filter":        1,
	"offsets/spark": 2,
	// offsets/exchange is kbatch's offsets document; its "next" is Spark's
	// offset JSON, so it sits above offsets/spark.
	"offsets/exchange": 3,
	// offsets/spark/objstore opens a checkpoint in a folder or an object
	// store (S3, GCS and Azure Blob, each with its cloud's credentials) as
	// an offsets/spark Store.
	"offsets/spark/objstore": 3,
	"config":                 2,
	"kafka":                  3,
	"consumer":               4,
	"replay":                 5,
	"sparkwatch":             6,
	"tui":                    7,
	"demo":                   7,
	"cli":                    8,
	"":                       9, // main
}

// owners names, for a library that owns a resource, the only packages
// (by prefix) whose non-test code may import it. internal/ (benchmark and
// test tools) may import anything.
var owners = map[string][]string{
	"github.com/IBM/sarama":   {"kafka"},
	"cel.dev/cel-go":          {"filter"},
	"charm.land/bubbletea/v2": {"tui"},
	"go.etcd.io/bbolt":        {"offsets"},
	// The clouds' clients and credential chains: only the object-store
	// reader (MSK IAM's signer in kafka brings AWS's own).
	"github.com/aws/aws-sdk-go-v2/config": {"offsets/spark/objstore"},
	"github.com/Azure/azure-sdk-for-go":   {"offsets/spark/objstore"},
	"golang.org/x/oauth2/google":          {"offsets/spark/objstore"},
	// franz-go: kafka fetches with it; the demo's embedded broker
	// (kfake) and its producers are franz-go too.
	"github.com/twmb/franz-go/pkg/kgo":  {"kafka", "demo"},
	"github.com/twmb/franz-go/pkg/kmsg": {"kafka"},
	"github.com/twmb/franz-go/pkg/sasl": {"kafka"},
}

// packages returns the module's package directories (relative, "" for
// the root) and what their non-test files import.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", root, err)
	}
	out := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			rel = ""
		}
		out[filepath.ToSlash(rel)] = p.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// layerViolations lists the imports of pkgs (directory → imports) that
// break the layering.
func layerViolations(pkgs map[string][]string) []string {
	var out []string
	for dir, imps := range pkgs {
		if dir == "internal" || strings.HasPrefix(dir, "internal/") {
			continue
		}
		r, ok := rank[dir]
		if !ok {
			out = append(out, fmt.Sprintf("package %q has no place in the layering: add it to rank", dir))
			continue
		}
		for _, imp := range imps {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := strings.TrimPrefix(imp, module+"/")
			if strings.HasPrefix(to, "internal/") {
				out = append(out, fmt.Sprintf("%q imports %s: internal/ is for tests and tools", dir, to))
			} else if rt, ok := rank[to]; ok && rt >= r {
				out = append(out, fmt.Sprintf("%q (rank %d) imports %q (rank %d): dependencies point down only", dir, r, to, rt))
			}
		}
	}
	sort.Strings(out)
	return out
}

// ownerViolations lists the imports of pkgs of an owned library by a
// package that does not own it.
func ownerViolations(pkgs map[string][]string) []string {
	var out []string
	for dir, imps := range pkgs {
		if dir == "internal" || strings.HasPrefix(dir, "internal/") {
			continue
		}
		for _, imp := range imps {
			for lib, allowed := range owners {
				if imp != lib && !strings.HasPrefix(imp, lib+"/") {
					continue
				}
				ok := false
				for _, a := range allowed {
					if dir == a || strings.HasPrefix(dir, a+"/") {
						ok = true
					}
				}
				if !ok {
					out = append(out, fmt.Sprintf("%q imports %s, which only %v may", dir, imp, allowed))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// wantLines fails t when got, what a check listed, is not want, line for
// line.
func wantLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDependenciesPointOneWay(t *testing.T) {
	pkgs := packages(t)
	for _, want := range []string{"", "record", "offsets", "kafka", "consumer", "replay", "tui"} {
		if _, ok := pkgs[want]; !ok {
			t.Fatalf("package %q not found; found %d packages", want, len(pkgs))
		}
	}
	for _, v := range layerViolations(pkgs) {
		t.Error(v)
	}
}

func TestOneOwnerPerLibrary(t *testing.T) {
	for _, v := range ownerViolations(packages(t)) {
		t.Error(v)
	}
}

// TestTheChecksCatchViolations runs both checks on a made-up tree with
// one violation of each kind, and internal/ importing freely.
func TestTheChecksCatchViolations(t *testing.T) {
	pkgs := map[string][]string{
		"kafka":             {module + "/record", "github.com/IBM/sarama"},
		"consumer":          {module + "/kafka", module + "/replay"},
		"tui":               {module + "/consumer", "github.com/IBM/sarama/mocks"},
		"newpkg":            nil,
		"internal/benchrun": {module + "/tui", "github.com/IBM/sarama"},
	}
	wantLayers := []string{
		`"consumer" (rank 4) imports "replay" (rank 5): dependencies point down only`,
		`package "newpkg" has no place in the layering: add it to rank`,
	}
	wantLines(t, "layer violations", layerViolations(pkgs), wantLayers)
	wantOwners := []string{`"tui" imports github.com/IBM/sarama/mocks, which only [kafka] may`}
	wantLines(t, "owner violations", ownerViolations(pkgs), wantOwners)
}

// recordLibraries are the only outside libraries package record imports
// (its package doc names them): it is the leaf every output path shares.
var recordLibraries = []string{"github.com/segmentio/asm/base64"}

func TestRecordImportsOnlyTheLibrariesItNames(t *testing.T) {
	imps, ok := packages(t)["record"]
	if !ok {
		t.Fatal("package record not found")
	}
	for _, imp := range imps {
		if libraryPath(imp) && !slices.Contains(recordLibraries, imp) {
			t.Errorf("record imports %s; its package doc and recordLibraries name only %v", imp, recordLibraries)
		}
	}
}
