package cli

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPngTextFindsPicturesWithoutText: scripts/pngtext.go, which make
// screenshots runs on every picture, fails on a window freeze drew
// without glyphs (its font family not found) and passes a screen of text.
func TestPngTextFindsPicturesWithoutText(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	dir := t.TempDir()
	write := func(name string, text bool) string {
		img := image.NewRGBA(image.Rect(0, 0, 200, 100))
		bg, fg := color.RGBA{0x17, 0x17, 0x17, 0xff}, color.RGBA{0xc4, 0xc4, 0xc4, 0xff}
		for y := 0; y < 100; y++ {
			for x := 0; x < 200; x++ {
				img.Set(x, y, bg)
				// Rows of "glyphs": 2-pixel strokes on every other cell.
				if text && y%10 < 7 && x%6 < 2 && (x/6+y/10)%3 != 0 {
					img.Set(x, y, fg)
				}
			}
		}
		// The window's corner controls, drawn with or without text.
		for y := 4; y < 8; y++ {
			for x := 4; x < 8; x++ {
				img.Set(x, y, color.RGBA{0xff, 0x5f, 0x57, 0xff})
			}
		}
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	withText, blank := write("text.png", true), write("blank.png", false)
	run := func(paths ...string) (string, error) {
		cmd := exec.Command("go", append([]string{"run", "scripts/pngtext.go"}, paths...)...)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(withText); err != nil {
		t.Fatalf("a picture of text was refused: %v\n%s", err, out)
	}
	out, err := run(withText, blank)
	if err == nil || !strings.Contains(out, "blank.png has no text drawn") || strings.Contains(out, "text.png has") {
		t.Fatalf("a picture without text passed (err %v):\n%s", err, out)
	}
}
