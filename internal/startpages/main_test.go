package main

import "testing"

func TestPackageAndModuleOfASymbol(t *testing.T) {
	modules := []string{"github.com/kbatch-dev/kbatch", "github.com/twmb/franz-go", "github.com/twmb/franz-go/pkg/kfake", "cel.dev/cel-go"}
	for _, tc := range []struct{ sym, pkg, module, owner string }{
		{"github.com/twmb/franz-go/pkg/kfake.(*Cluster).handle", "github.com/twmb/franz-go/pkg/kfake", "github.com/twmb/franz-go/pkg/kfake", "github.com/twmb"},
		{"github.com/twmb/franz-go/pkg/kgo.(*Client).Close", "github.com/twmb/franz-go/pkg/kgo", "github.com/twmb/franz-go", "github.com/twmb"},
		{"type:*github.com/kbatch-dev/kbatch/offsets.Store", "github.com/kbatch-dev/kbatch/offsets", "github.com/kbatch-dev/kbatch", "github.com/kbatch-dev"},
		{"go:itab.*cel.dev/cel-go/common/types.Int,cel.dev/cel-go/common/types/ref.Val", "cel.dev/cel-go/common/types", "cel.dev/cel-go", "cel.dev/cel-go"},
		{"runtime.mallocgc", "runtime", "runtime", "runtime"},
		{"crypto/internal/fips140/aes.encryptBlock", "crypto/internal/fips140/aes", "crypto", "crypto"},
		{"main.main", "main", "main", "main"},
		{"slices.SortFunc[go.shape.struct { github.com/kbatch-dev/kbatch/offsets.x int }]", "slices", "slices", "slices"},
	} {
		pkg := packageOf(tc.sym)
		if pkg != tc.pkg {
			t.Errorf("packageOf(%q) = %q, want %q", tc.sym, pkg, tc.pkg)
		}
		if m := moduleOf(modules, pkg); m != tc.module {
			t.Errorf("moduleOf(%q) = %q, want %q", pkg, m, tc.module)
		}
		if o := owner(moduleOf(modules, pkg)); o != tc.owner {
			t.Errorf("owner of %q = %q, want %q", pkg, o, tc.owner)
		}
	}
}
