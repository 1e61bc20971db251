package cli

import (
	"os"
	"path/filepath"
)

// checkFiles refuses a --sink or --log that names the offset store (even
// under --no-store: the file is still the store of other runs), or each
// other: records appended to the store's file would be overwritten by its
// page writes, and the store would be damaged.
func (o *watchOptions) checkFiles(g *globalOptions) error {
	sink := o.sink
	if sink == "-" {
		sink = ""
	}
	if err := notTheStore(g, "--sink", sink); err != nil {
		return err
	}
	if err := notTheStore(g, "--log", o.log); err != nil {
		return err
	}
	if sink != "" && o.log != "" && sameFile(sink, o.log) {
		return usagef("--sink %s and --log %s are one file: records and the debug log would be mixed; name two files", sink, o.log)
	}
	return nil
}

// notTheStore refuses path (flag's file; "" for none) when it is the offset
// store's file. A store path that cannot be worked out is left to the
// store's own opening to report.
func notTheStore(g *globalOptions, flag, path string) error {
	if path == "" {
		return nil
	}
	store, err := g.storePath()
	if err != nil || !sameFile(path, store) {
		return nil
	}
	return usagef("%s %s is the offset store's file (--store): writing there would damage the store; name another file", flag, path)
}

// sameFile reports whether the paths a and b name one file: os.SameFile
// when both exist, else the same absolute path once the symbolic links of
// their folders are resolved (a file that is not there yet).
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	return resolvedPath(a) == resolvedPath(b)
}

// resolvedPath is p absolute, its folders' links resolved, and p itself
// followed while it is a link (to a file that may not exist yet).
func resolvedPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	for range 8 {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
			abs = filepath.Join(dir, filepath.Base(abs))
		}
		fi, err := os.Lstat(abs)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return abs
		}
		to, err := os.Readlink(abs)
		if err != nil {
			return abs
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(abs), to)
		}
		abs = filepath.Clean(to)
	}
	return abs
}
