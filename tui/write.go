package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"

	krecord "github.com/kbatch-dev/kbatch/record"
)

// write saves the replay's records as JSON lines: from memory when every
// record read is kept in full, else by reading the ranges again.
func (m *Model) write(req writeRequestMsg) tea.Cmd {
	v := m.replay
	if v == nil {
		return nil
	}
	ctx, r, tasks := m.ctx, m.opts.Replayer, v.tasks
	var recs []*record
	if v.complete() {
		recs = v.recs
	}
	m.bg.Add(1)
	return func() tea.Msg {
		defer m.bg.Done()
		n, err := writeJSONLines(ctx, req.path, func(put func(*krecord.Record) error) error {
			if recs != nil {
				for _, rec := range recs {
					if err := put(rec.message()); err != nil {
						return err
					}
				}
				return nil
			}
			return r.Read(ctx, tasks, func(c ReplayChunk) error {
				for _, msg := range c.Records {
					if err := put(msg); err != nil {
						return err
					}
				}
				return nil
			})
		})
		return writeDoneMsg{id: req.id, path: req.path, records: n, err: err}
	}
}

func (m *Model) writeDone(msg writeDoneMsg) tea.Cmd {
	if msg.err != nil {
		m.setStatus("write failed: "+krecord.String(msg.err.Error()), m.c.theme.bad)
	} else {
		m.setStatus(fmt.Sprintf("wrote %s to %s", plural(int64(msg.records), "record", "records"), krecord.String(msg.path)), m.c.theme.ok)
	}
	if m.replay != nil {
		return m.replay.Update(msg)
	}
	return nil
}

// writeJSONLines writes the records fill puts to path as docs/design.md §4 JSON
// lines, through krecord.WriteFile: path is either complete or absent, a
// failure or a cancelled ctx (quit) removes the temporary file, and an
// existing path is refused rather than overwritten.
func writeJSONLines(ctx context.Context, path string, fill func(put func(*krecord.Record) error) error) (int, error) {
	if err := checkWritable(path); err != nil {
		return 0, err
	}
	n, err := krecord.WriteFile(path, false, func(put func(*krecord.Record) error) error {
		return fill(func(m *krecord.Record) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return put(m)
		})
	})
	switch {
	case err == nil || errors.Is(err, context.Canceled):
	case errors.Is(err, krecord.ErrExists):
		err = fmt.Errorf("%s exists; choose another name", path)
	default:
		err = fmt.Errorf("cannot write %s: %v", path, cause(err))
	}
	return n, err
}

// checkWritable refuses a path that exists (nothing is overwritten) or
// whose folder does not.
func checkWritable(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s exists; choose another name", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot write %s: %v", path, cause(err))
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return fmt.Errorf("cannot write %s: no folder %s", path, filepath.Dir(path))
	}
	return nil
}

// cause is err without the file name an *fs.PathError adds (the
// temporary file's, which the user never named).
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// expandHome turns a leading ~ or ~/ into the home folder, as a shell
// would for the file name typed in the write prompt.
func expandHome(path string) string {
	if path != "~" && !strings.HasPrefix(path, "~/") {
		return path
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return path
	}
	return filepath.Join(home, strings.TrimPrefix(path, "~"))
}
