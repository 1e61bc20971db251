//go:build ignore

// freeze-ansi rewrites a `tmux capture-pane -e` screen for freeze v0.2.2,
// which draws only part of SGR: it ignores reverse video, faint, bold,
// default colours (39, 49) and the basic backgrounds (40-47), and it does
// not carry colours from one line to the next the way tmux's capture
// expects. This program keeps the full SGR state across the screen and
// restates every run of text as an explicit true-colour foreground and
// background (reverse swapped, faint blended, bold brightened), so the
// PNG shows what a terminal shows.
//
//	go run scripts/freeze-ansi.go < screen.ansi > screen.freeze.ansi
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Freeze's own palette for the 16 colours, its background, and the
// default text colour, so the image looks like freeze's other output.
var palette16 = [16]rgb{
	{0x28, 0x2a, 0x2e}, {0xd7, 0x4e, 0x6f}, {0x31, 0xbb, 0x71}, {0xd3, 0xe5, 0x61},
	{0x80, 0x56, 0xff}, {0xed, 0x61, 0xd7}, {0x04, 0xd7, 0xd7}, {0xc5, 0xc8, 0xc6},
	{0x4b, 0x4b, 0x4b}, {0xfe, 0x5f, 0x86}, {0x00, 0xd7, 0x87}, {0xeb, 0xff, 0x71},
	{0x8f, 0x69, 0xff}, {0xff, 0x7a, 0xea}, {0x00, 0xfe, 0xfe}, {0xff, 0xff, 0xff},
}

var (
	defaultFG = rgb{0xc5, 0xc8, 0xc6}
	defaultBG = rgb{0x17, 0x17, 0x17}
	boldFG    = rgb{0xff, 0xff, 0xff}
)

type rgb struct{ r, g, b uint8 }

func (c rgb) blend(o rgb, f float64) rgb {
	mix := func(a, b uint8) uint8 { return uint8(float64(a)*(1-f) + float64(b)*f + 0.5) }
	return rgb{mix(c.r, o.r), mix(c.g, o.g), mix(c.b, o.b)}
}

// colour is unset (the default) or an RGB value.
type colour struct {
	set bool
	c   rgb
}

type state struct {
	fg, bg                          colour
	bold, faint, underline, reverse bool
}

func xterm256(n int) rgb {
	switch {
	case n < 16:
		return palette16[n]
	case n < 232:
		n -= 16
		level := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + 40*v)
		}
		return rgb{level(n / 36), level(n / 6 % 6), level(n % 6)}
	}
	v := uint8(8 + 10*(n-232))
	return rgb{v, v, v}
}

// apply folds one SGR parameter list into s.
func (s *state) apply(params string) {
	var p []int
	for _, f := range strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' }) {
		n, _ := strconv.Atoi(f)
		p = append(p, n)
	}
	if len(p) == 0 {
		p = []int{0}
	}
	for i := 0; i < len(p); i++ {
		switch v := p[i]; {
		case v == 0:
			*s = state{}
		case v == 1:
			s.bold = true
		case v == 2:
			s.faint = true
		case v == 22:
			s.bold, s.faint = false, false
		case v == 4:
			s.underline = true
		case v == 24:
			s.underline = false
		case v == 7:
			s.reverse = true
		case v == 27:
			s.reverse = false
		case v >= 30 && v <= 37:
			s.fg = colour{true, palette16[v-30]}
		case v >= 90 && v <= 97:
			s.fg = colour{true, palette16[v-90+8]}
		case v == 39:
			s.fg = colour{}
		case v >= 40 && v <= 47:
			s.bg = colour{true, palette16[v-40]}
		case v >= 100 && v <= 107:
			s.bg = colour{true, palette16[v-100+8]}
		case v == 49:
			s.bg = colour{}
		case v == 38 || v == 48:
			var c rgb
			switch {
			case i+2 < len(p) && p[i+1] == 5:
				c = xterm256(p[i+2])
				i += 2
			case i+4 < len(p) && p[i+1] == 2:
				c = rgb{uint8(p[i+2]), uint8(p[i+3]), uint8(p[i+4])}
				i += 4
			default:
				continue
			}
			if v == 38 {
				s.fg = colour{true, c}
			} else {
				s.bg = colour{true, c}
			}
		}
	}
}

// sgr is the explicit sequence that draws text in state s.
func (s state) sgr() string {
	fg, bg := defaultFG, defaultBG
	if s.fg.set {
		fg = s.fg.c
	} else if s.bold {
		fg = boldFG
	}
	if s.bg.set {
		bg = s.bg.c
	}
	if s.faint {
		fg = fg.blend(bg, 0.45)
	}
	if s.reverse {
		fg, bg = bg, fg
	}
	out := fmt.Sprintf("\x1b[0;38;2;%d;%d;%d", fg.r, fg.g, fg.b)
	if bg != defaultBG {
		out += fmt.Sprintf(";48;2;%d;%d;%d", bg.r, bg.g, bg.b)
	}
	if s.underline {
		out += ";4"
	}
	return out + "m"
}

func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	var s state
	last := ""
	for _, line := range strings.Split(strings.TrimRight(string(in), "\n"), "\n") {
		last = "" // restate at the start of every line
		for i := 0; i < len(line); {
			if line[i] == 0x1b {
				// CSI ... final byte; only SGR changes the state.
				j := i + 1
				if j < len(line) && line[j] == '[' {
					j++
					for j < len(line) && (line[j] < 0x40 || line[j] > 0x7e) {
						j++
					}
					if j < len(line) && line[j] == 'm' {
						s.apply(line[i+2 : j])
					}
					i = j + 1
					continue
				}
				i = j + 1 // another escape: drop it
				continue
			}
			if seq := s.sgr(); seq != last {
				w.WriteString(seq)
				last = seq
			}
			j := i
			for j < len(line) && line[j] != 0x1b {
				j++
			}
			w.WriteString(line[i:j])
			i = j
		}
		w.WriteString("\x1b[0m\n")
	}
}
