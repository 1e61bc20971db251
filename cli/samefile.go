package cli

import (
	"os"
	"path/filepath"
	"strings"
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
	loc, err := g.storeLocation()
	if err != nil {
		return nil
	}
	if loc.folder {
		if !sameFile(filepath.Dir(path), loc.path) && !sameFile(path, loc.from) && !sameFile(path, loc.path) {
			return nil
		}
		return usagef("%s %s is in the offset store's folder %s (or is its file): writing there would damage the store; name another file", flag, path, loc.path)
	}
	if !sameFile(path, loc.path) {
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

// resolvedPath is p as the kernel would resolve it, for a file that may
// not exist yet: absolute, each existing component's links followed in
// turn (so "link/.." is the link target's folder), up to 40 links as
// Linux allows; from the first component that does not exist on, the rest
// is taken as written.
func resolvedPath(p string) string {
	abs := p // not filepath.Abs: it cleans "link/.." away as text
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return filepath.Clean(p)
		}
		abs = wd + string(filepath.Separator) + p
	}
	rest := strings.Split(strings.TrimPrefix(filepath.ToSlash(abs), "/"), "/")
	cur := string(filepath.Separator)
	if v := filepath.VolumeName(abs); v != "" {
		cur, rest = v+string(filepath.Separator), strings.Split(strings.TrimPrefix(filepath.ToSlash(abs[len(v):]), "/"), "/")
	}
	for links := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 40 {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		to, err := os.Readlink(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if filepath.IsAbs(to) {
			cur = string(filepath.Separator)
			if v := filepath.VolumeName(to); v != "" {
				cur, to = v+string(filepath.Separator), to[len(v):]
			}
		}
		rest = append(strings.Split(filepath.ToSlash(to), "/"), rest...)
	}
	return cur
}
