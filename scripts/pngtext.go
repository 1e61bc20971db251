//go:build ignore

// pngtext checks that PNG screenshots have text drawn on them: freeze
// draws a window with no glyphs at all when it does not find the font
// family it was given, and exits 0. A screenshot of kbatch is mostly
// text and frame lines; this program counts the pixels that stand out
// from the background (the most common colour) and fails when fewer than
// 1 in 100 do (a blank window: its corners and shadow only).
//
//	go run scripts/pngtext.go screenshots/*.png
package main

import (
	"fmt"
	"image/png"
	"os"
)

// minInk is the least share of pixels that differ from the background
// for a picture to count as having text. kbatch's screens measure 2 to
// 11 %, a window without glyphs 0 %.
const minInk = 0.01

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/pngtext.go FILE.png...")
		os.Exit(2)
	}
	bad := 0
	for _, path := range os.Args[1:] {
		ink, err := inkShare(path)
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "pngtext: %s: %v\n", path, err)
			bad++
		case ink < minInk:
			fmt.Fprintf(os.Stderr, "pngtext: %s has no text drawn (%.2f %% of its pixels differ from the background; the font was not found?)\n", path, 100*ink)
			bad++
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
}

// inkShare is the share of pixels of the PNG at path that differ from its
// most common colour by more than a faint shade.
func inkShare(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return 0, err
	}
	b := img.Bounds()
	if b.Empty() {
		return 0, fmt.Errorf("an empty picture")
	}
	type rgb struct{ r, g, b uint32 }
	at := func(x, y int) rgb {
		r, g, bl, _ := img.At(x, y).RGBA()
		return rgb{r >> 8, g >> 8, bl >> 8}
	}
	counts := map[rgb]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[at(x, y)]++
		}
	}
	var bg rgb
	for c, n := range counts {
		if n > counts[bg] {
			bg = c
		}
	}
	diff := func(a, b uint32) uint32 {
		if a > b {
			return a - b
		}
		return b - a
	}
	ink := 0
	for c, n := range counts {
		if max(diff(c.r, bg.r), diff(c.g, bg.g), diff(c.b, bg.b)) > 48 {
			ink += n
		}
	}
	return float64(ink) / float64(b.Dx()*b.Dy()), nil
}
