package tui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/IBM/sarama"

	"github.com/kbatch-dev/kbatch/consumer"
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
		n, err := writeJSONLines(ctx, req.path, func(put func(*sarama.ConsumerMessage) error) error {
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
		m.setStatus("write failed: "+EscapeString(msg.err.Error()), m.c.theme.bad)
	} else {
		m.setStatus(fmt.Sprintf("wrote %d records to %s", msg.records, EscapeString(msg.path)), m.c.theme.ok)
	}
	if m.replay != nil {
		return m.replay.Update(msg)
	}
	return nil
}

// writeJSONLines writes the records fill puts to path as DESIGN §4 JSON
// lines. It writes a temporary file beside path, syncs it and renames it
// into place, so path is either complete or absent: a failure or a
// cancelled ctx (quit) removes the temporary file. An existing path is
// refused rather than overwritten.
func writeJSONLines(ctx context.Context, path string, fill func(put func(*sarama.ConsumerMessage) error) error) (n int, err error) {
	if err := checkWritable(path); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return 0, fmt.Errorf("cannot create a file in %s: %v", filepath.Dir(path), cause(err))
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
			if !errors.Is(err, context.Canceled) {
				err = fmt.Errorf("cannot write %s: %v", path, cause(err))
			}
		}
	}()
	w := bufio.NewWriterSize(tmp, 256<<10)
	var buf []byte
	err = fill(func(m *sarama.ConsumerMessage) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf = consumer.AppendRecordJSON(buf[:0], m)
		n++
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return 0, err
	}
	if err = w.Flush(); err != nil {
		return 0, err
	}
	if err = tmp.Sync(); err != nil {
		return 0, err
	}
	if err = tmp.Close(); err != nil {
		return 0, err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return 0, err
	}
	return n, nil
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
