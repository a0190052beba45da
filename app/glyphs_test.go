package app

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2/theme"
	"github.com/go-text/typesetting/font"
)

// TestTextsHaveGlyphs checks every string literal of the app's code against the fonts the app
// draws with: Fyne's Noto Sans and its emoji font. The desktop falls back on the system's fonts
// for a missing character, but the browser build has none and draws a box (≥ did in the
// colour bar). Comments are not drawn and not checked.
func TestTextsHaveGlyphs(t *testing.T) {
	var faces []*font.Face // the regular text face, then the emoji face
	for _, r := range []interface{ Content() []byte }{theme.DefaultTextFont(), theme.DefaultEmojiFont()} {
		if r == nil {
			continue // built without the emoji font
		}
		f, err := font.ParseTTF(bytes.NewReader(r.Content()))
		if err != nil {
			t.Fatal(err)
		}
		faces = append(faces, f)
	}
	has := func(r rune) bool {
		for _, f := range faces {
			if _, ok := f.NominalGlyph(r); ok {
				return true
			}
		}
		return false
	}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "testdata") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		replaced := map[ast.Node]bool{} // strings.NewReplacer's old strings: input, never drawn
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewReplacer" {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "strings" {
						for i := 0; i < len(call.Args); i += 2 {
							replaced[call.Args[i]] = true
						}
					}
				}
			}
			if replaced[n] {
				return true
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			checked++
			for _, r := range s {
				if r >= 0x20 && r != 0x7f && !has(r) {
					t.Errorf("%s: %q holds %q (%U), which the app's font lacks (the browser draws a box); spell it in ASCII or words", path, s, r, r)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 500 {
		t.Fatalf("only %d string literals checked", checked)
	}
}
