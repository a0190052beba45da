package jobs

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2/theme"
	"github.com/go-text/typesetting/font"

	"github.com/hubscope/hubscope/ipc"
)

// appHas reports whether the app's fonts (Fyne's Noto Sans and its emoji font: all the
// browser build has) draw r.
func appHas(t *testing.T) func(rune) bool {
	var faces []*font.Face
	for _, r := range []interface{ Content() []byte }{theme.DefaultTextFont(), theme.DefaultEmojiFont()} {
		if r == nil {
			continue
		}
		f, err := font.ParseTTF(bytes.NewReader(r.Content()))
		if err != nil {
			t.Fatal(err)
		}
		faces = append(faces, f)
	}
	return func(r rune) bool {
		for _, f := range faces {
			if _, ok := f.NominalGlyph(r); ok {
				return true
			}
		}
		return r < 0x20 || r == 0x7f
	}
}

// TestHelperTextsPlainHaveGlyphs walks every string literal of the helper's code (helper/,
// ipc/, cmd/hubscope-helper: messages, warnings, "undefined (why)" reasons, labels, the
// summary) and checks that, spelled by Plain as PlainService spells what the helper sends,
// each character is in the app's fonts.
func TestHelperTextsPlainHaveGlyphs(t *testing.T) {
	has := appHas(t)
	missing := map[rune]string{}
	checked := 0
	for _, root := range []string{"../../helper", "../../ipc", "../../cmd/hubscope-helper"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "testdata") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				checked++
				for _, r := range Plain(s) {
					if !has(r) && missing[r] == "" {
						missing[r] = path + ": " + s
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for r, where := range missing {
		t.Errorf("%q (%U) is not in the app's fonts after Plain: %.120s", r, r, where)
	}
	if checked < 2000 {
		t.Fatalf("only %d string literals checked", checked)
	}
}

// signed fills every string reachable from v with the helper's signs, byte slices with JSON
// holding them, and gives maps and slices one element and pointers a value (depth-limited).
func signed(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("k ≥ 2, r ≤ 0.5, −1, ≈ 3, a → b, p ⇔ q, P ∝ k")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		signed(v.Elem(), depth+1)
	case reflect.Interface:
		if v.NumMethod() == 0 {
			v.Set(reflect.ValueOf(map[string]any{"why": "k ≥ 2"}))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				signed(v.Field(i), depth+1)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(`{"note": "modules of ≥ 2 nodes", "z": −1}`))
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		signed(v.Index(0), depth+1)
	case reflect.Array:
		for i := range v.Len() {
			signed(v.Index(i), depth+1)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		if k.Kind() == reflect.String {
			k.SetString("key")
		}
		signed(e, depth+1)
		v.SetMapIndex(k, e)
	}
}

// unsigned returns the first text reachable from v that still holds one of the signs.
func unsigned(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		if strings.ContainsAny(v.String(), signs) {
			return v.String()
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return unsigned(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				if s := unsigned(v.Field(i)); s != "" {
					return v.Type().Field(i).Name + ": " + s
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if b := v.Bytes(); bytes.ContainsAny(b, signs) {
				return string(b)
			}
			return ""
		}
		for i := range v.Len() {
			if s := unsigned(v.Index(i)); s != "" {
				return s
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if s := unsigned(it.Value()); s != "" {
				return s
			}
		}
	}
	return ""
}

func fill[T any]() T {
	var v T
	signed(reflect.ValueOf(&v).Elem(), 0)
	return v
}

// signedService answers every call with values whose every string holds the signs.
type signedService struct{ ipc.Service }

func (signedService) Info(context.Context) (ipc.Info, error) { return fill[ipc.Info](), nil }
func (signedService) Submit(context.Context, ipc.JobRequest) (ipc.Job, error) {
	return fill[ipc.Job](), nil
}
func (signedService) Jobs(context.Context) ([]ipc.Job, error)         { return fill[[]ipc.Job](), nil }
func (signedService) Job(context.Context, string) (ipc.Job, error)    { return fill[ipc.Job](), nil }
func (signedService) Cancel(context.Context, string) (ipc.Job, error) { return fill[ipc.Job](), nil }
func (signedService) Summary(context.Context, string) (ipc.Summary, error) {
	return fill[ipc.Summary](), nil
}
func (signedService) Volume(context.Context, string, string) (*ipc.Volume, error) {
	return fill[*ipc.Volume](), nil
}
func (signedService) SeedMap(context.Context, string, [3]int) (*ipc.Volume, error) {
	return fill[*ipc.Volume](), nil
}
func (signedService) Series(context.Context, string, [3]int) (ipc.Series, error) {
	return fill[ipc.Series](), nil
}
func (signedService) Events(context.Context, string) (<-chan ipc.Event, error) {
	c := make(chan ipc.Event, 2)
	c <- fill[ipc.Event]()
	c <- fill[ipc.Event]()
	close(c)
	return c, nil
}
func (signedService) OpenFile(_ context.Context, _, name string) (io.ReadCloser, ipc.FileInfo, error) {
	return io.NopCloser(strings.NewReader("measure\tk ≥ 2\t−0.5\n")), ipc.FileInfo{Name: name}, nil
}

// TestPlainServiceSpellsEverything: through PlainService, no string of any answer (jobs,
// events, summaries with metrics.json's bytes and group, comparison and input checks,
// volumes, series, text files) holds a sign the browser's font lacks.
func TestPlainServiceSpellsEverything(t *testing.T) {
	ctx := context.Background()
	svc := PlainService(signedService{})
	check := func(what string, v any) {
		t.Helper()
		if unsigned(reflect.ValueOf(v)) == "" {
			t.Fatalf("%s: the filler put no sign in it", what)
		}
	}
	check("filler", fill[ipc.Summary]())
	answers := map[string]func() (any, error){
		"Info":    func() (any, error) { return svc.Info(ctx) },
		"Submit":  func() (any, error) { return svc.Submit(ctx, ipc.JobRequest{}) },
		"Jobs":    func() (any, error) { return svc.Jobs(ctx) },
		"Job":     func() (any, error) { return svc.Job(ctx, "j") },
		"Cancel":  func() (any, error) { return svc.Cancel(ctx, "j") },
		"Summary": func() (any, error) { return svc.Summary(ctx, "j") },
		"Volume":  func() (any, error) { return svc.Volume(ctx, "j", "degree") },
		"SeedMap": func() (any, error) { return svc.SeedMap(ctx, "j", [3]int{}) },
		"Series":  func() (any, error) { return svc.Series(ctx, "j", [3]int{}) },
		"Events": func() (any, error) {
			c, err := svc.Events(ctx, "j")
			var evs []ipc.Event
			for ev := range c {
				evs = append(evs, ev)
			}
			if len(evs) != 2 {
				t.Errorf("%d events, want 2", len(evs))
			}
			return evs, err
		},
		"OpenFile": func() (any, error) {
			rc, _, err := svc.OpenFile(ctx, "j", "measures.tsv")
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(rc)
			return string(b), err
		},
	}
	for name, call := range answers {
		v, err := call()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s := unsigned(reflect.ValueOf(v)); s != "" {
			t.Errorf("%s: %q still holds a sign", name, s)
		}
	}
	// A binary file passes untouched.
	rc, _, _ := PlainService(signedService{}).OpenFile(ctx, "j", "degree.nii.gz")
	if b, _ := io.ReadAll(rc); !bytes.ContainsAny(b, signs) {
		t.Errorf("a binary file was rewritten")
	}
}

type followLister struct{ signedService }

func (followLister) Follow(_ context.Context, _ string, fn func(ipc.Event)) error {
	fn(fill[ipc.Event]())
	return nil
}

func (followLister) ListSeries(context.Context, ipc.SeriesRequest) (ipc.DICOMListing, error) {
	return fill[ipc.DICOMListing](), nil
}

// TestPlainServiceKeepsOptional: a service's follow and DICOM listing stay available through
// PlainService, spelled too, and are not claimed for a service without them.
func TestPlainServiceKeepsOptional(t *testing.T) {
	svc := PlainService(followLister{})
	f, ok := svc.(follower)
	l, ok2 := svc.(ipc.SeriesLister)
	if !ok || !ok2 {
		t.Fatalf("follow %v, list series %v: want both", ok, ok2)
	}
	var got ipc.Event
	if err := f.Follow(context.Background(), "j", func(ev ipc.Event) { got = ev }); err != nil {
		t.Fatal(err)
	}
	if s := unsigned(reflect.ValueOf(got)); s != "" || got.Message == "" {
		t.Errorf("followed event %q still holds a sign (or is empty)", s)
	}
	ls, err := l.ListSeries(context.Background(), ipc.SeriesRequest{})
	if s := unsigned(reflect.ValueOf(ls)); err != nil || s != "" {
		t.Errorf("listing: %v, %q still holds a sign", err, s)
	}
	if _, ok := PlainService(signedService{}).(follower); ok {
		t.Error("a service without Follow gained one")
	}
	if _, ok := PlainService(signedService{}).(ipc.SeriesLister); ok {
		t.Error("a service without ListSeries gained one")
	}
}

type folderLister struct{ signedService }

func (folderLister) FolderTable(context.Context, string, string) ([]byte, error) {
	return []byte("measure\tt\nr≥0.3\t2\n"), nil
}

func (folderLister) Folders(context.Context) ([]ipc.ResultFolder, error) {
	return []ipc.ResultFolder{{ID: "folder/r≥0.3", Name: "r≥0.3", Kind: ipc.FolderBundle}}, nil
}

// TestPlainServiceFolders: the helper's result folders reach the browser app through
// PlainService (its "Open results folder…" lists them), their names spelled plain and their
// IDs, which go back to the helper, untouched; a service without them says not found.
func TestPlainServiceFolders(t *testing.T) {
	fl, ok := PlainService(folderLister{}).(ipc.FolderLister)
	if !ok {
		t.Fatal("PlainService hides the folder listing")
	}
	fs, err := fl.Folders(context.Background())
	if err != nil || len(fs) != 1 || fs[0].ID != "folder/r≥0.3" || fs[0].Name != "r>=0.3" {
		t.Errorf("folders %+v, %v", fs, err)
	}
	if b, err := PlainService(folderLister{}).(ipc.FolderTabler).FolderTable(context.Background(), "folder/deriv", "measures.tsv"); err != nil || string(b) != "measure\tt\nr>=0.3\t2\n" {
		t.Errorf("folder table %q, %v", b, err)
	}
	if _, err := PlainService(signedService{}).(ipc.FolderLister).Folders(context.Background()); !ipc.IsCode(err, ipc.CodeNotFound) {
		t.Errorf("a service without folders: %v", err)
	}
}
