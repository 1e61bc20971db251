// Package tui is kbatch's terminal UI: a bubbletea v2 program that shows a
// running direct stream batch by batch (docs/design.md §6).
//
// The root Model lays the screen out, owns the global keys and routes
// everything else to one model per pane (partitions, batches, records,
// events) or to the view on top (record detail, replay, help). The forms
// (seek, replay ranges) are dialogs: boxes drawn over the live screen.
// Wide terminals show every pane at once; smaller ones one pane at a time
// behind tabs; below 60×16 a message says the terminal is too small.
// Panes get what they need through small interfaces declared here
// (Controls, Replayer), so tests drive them with fakes.
//
// The consumer reaches the screen through one bridge (bridge.go): a tea.Cmd
// that waits on the stream's event channel, drains what else is ready, and
// hands the burst over as one message at most ~30 times a second, about
// five times a second while a catch-up cuts batches back to back; Update
// re-arms it. Commands to the stream (pause, seek, ack …) run as tea.Cmds
// too, never inside Update, because the stream's loop may be waiting for
// the UI to take an event.
//
// Every byte that comes from a record, a broker or a file goes through the
// record package's one escaping rule (record.EscapeLine, EscapeText,
// EscapeBinary, String) once, where it is drawn, or through
// record.SafeJSON when it is shown as JSON (docs/design.md §2.7).
package tui
