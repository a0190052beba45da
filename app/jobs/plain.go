package jobs

import (
	"bytes"
	"context"
	"io"
	"path"
	"reflect"
	"strings"

	"github.com/hubscope/hubscope/ipc"
)

// PlainService is svc with every text the helper sends spelled by Plain, for the browser
// build, whose font draws a box for ≥, ≤, −, ≈, →, ⇔ and ∝: the strings of jobs, events,
// summaries (metrics.json's bytes among them), volume headers and series, and the text
// files of a bundle (JSON, TSV, CSV, plain text). Names the app hands back to the helper
// (file and volume names, job IDs) never hold those signs, so they still match.
// What svc adds to ipc.Service and the app asks for (a follow that restarts the helper, a
// DICOM listing) stays, spelled the same way.
func PlainService(svc ipc.Service) ipc.Service {
	p := plainService{svc}
	_, follows := svc.(follower)
	_, lists := svc.(ipc.SeriesLister)
	switch {
	case follows && lists:
		return plainFollowLister{p}
	case follows:
		return plainFollower{p}
	case lists:
		return plainLister{p}
	}
	return p
}

type plainService struct{ ipc.Service }

type (
	plainFollower     struct{ plainService }
	plainLister       struct{ plainService }
	plainFollowLister struct{ plainService }
)

func (s plainFollower) Follow(ctx context.Context, id string, fn func(ipc.Event)) error {
	return s.follow(ctx, id, fn)
}

func (s plainFollowLister) Follow(ctx context.Context, id string, fn func(ipc.Event)) error {
	return s.follow(ctx, id, fn)
}

func (s plainLister) ListSeries(ctx context.Context, req ipc.SeriesRequest) (ipc.DICOMListing, error) {
	return s.listSeries(ctx, req)
}

func (s plainFollowLister) ListSeries(ctx context.Context, req ipc.SeriesRequest) (ipc.DICOMListing, error) {
	return s.listSeries(ctx, req)
}

func (s plainService) follow(ctx context.Context, id string, fn func(ipc.Event)) error {
	return s.Service.(follower).Follow(ctx, id, func(ev ipc.Event) {
		PlainAll(&ev)
		fn(ev)
	})
}

func (s plainService) listSeries(ctx context.Context, req ipc.SeriesRequest) (ipc.DICOMListing, error) {
	v, err := s.Service.(ipc.SeriesLister).ListSeries(ctx, req)
	PlainAll(&v)
	return v, err
}

func (s plainService) Info(ctx context.Context) (ipc.Info, error) {
	v, err := s.Service.Info(ctx)
	PlainAll(&v)
	return v, err
}

func (s plainService) Submit(ctx context.Context, req ipc.JobRequest) (ipc.Job, error) {
	v, err := s.Service.Submit(ctx, req)
	PlainAll(&v)
	return v, err
}

// Folders lists the helper's result folders (ipc.FolderLister), their names spelled by Plain
// (their IDs, which go back to the helper, as they are); a Service that lists none answers as
// a helper without the route does (not found).
func (s plainService) Folders(ctx context.Context) ([]ipc.ResultFolder, error) {
	fl, ok := s.Service.(ipc.FolderLister)
	if !ok {
		return nil, ipc.Errorf(ipc.CodeNotFound, "this helper lists no result folders")
	}
	v, err := fl.Folders(ctx)
	for i := range v {
		PlainAll(&v[i].Name)
	}
	return v, err
}

// FolderTable reads a cohort folder's table (ipc.FolderTabler), spelled by Plain.
func (s plainService) FolderTable(ctx context.Context, id, name string) ([]byte, error) {
	ft, ok := s.Service.(ipc.FolderTabler)
	if !ok {
		return nil, ipc.Errorf(ipc.CodeNotFound, "this helper serves no folder tables")
	}
	b, err := ft.FolderTable(ctx, id, name)
	return plainBytes(b), err
}

func (s plainService) Jobs(ctx context.Context) ([]ipc.Job, error) {
	v, err := s.Service.Jobs(ctx)
	PlainAll(&v)
	return v, err
}

func (s plainService) Job(ctx context.Context, id string) (ipc.Job, error) {
	v, err := s.Service.Job(ctx, id)
	PlainAll(&v)
	return v, err
}

func (s plainService) Cancel(ctx context.Context, id string) (ipc.Job, error) {
	v, err := s.Service.Cancel(ctx, id)
	PlainAll(&v)
	return v, err
}

func (s plainService) Summary(ctx context.Context, id string) (ipc.Summary, error) {
	v, err := s.Service.Summary(ctx, id)
	PlainAll(&v)
	return v, err
}

func (s plainService) Volume(ctx context.Context, id, name string) (*ipc.Volume, error) {
	v, err := s.Service.Volume(ctx, id, name)
	PlainAll(v)
	return v, err
}

func (s plainService) SeedMap(ctx context.Context, id string, voxel [3]int) (*ipc.Volume, error) {
	v, err := s.Service.SeedMap(ctx, id, voxel)
	PlainAll(v)
	return v, err
}

func (s plainService) Series(ctx context.Context, id string, voxel [3]int) (ipc.Series, error) {
	v, err := s.Service.Series(ctx, id, voxel)
	PlainAll(&v)
	return v, err
}

func (s plainService) Events(ctx context.Context, id string) (<-chan ipc.Event, error) {
	in, err := s.Service.Events(ctx, id)
	if err != nil || in == nil {
		return in, err
	}
	out := make(chan ipc.Event, cap(in))
	go func() {
		defer close(out)
		for ev := range in {
			PlainAll(&ev)
			select {
			case out <- ev:
			case <-ctx.Done():
				for range in { // the reader has gone: let the source finish and close
				}
				return
			}
		}
	}()
	return out, nil
}

func (s plainService) OpenFile(ctx context.Context, id, name string) (io.ReadCloser, ipc.FileInfo, error) {
	rc, fi, err := s.Service.OpenFile(ctx, id, name)
	if err != nil || !textFile(name) {
		return rc, fi, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fi, err
	}
	return io.NopCloser(bytes.NewReader(plainBytes(b))), fi, nil
}

// textFile reports whether a bundle file is text the app reads and shows (not an image).
func textFile(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".json", ".tsv", ".csv", ".txt":
		return true
	}
	return false
}

// plainBytes is Plain on UTF-8 text. In JSON the signs only occur inside strings, where
// their ASCII spellings are valid too.
func plainBytes(b []byte) []byte {
	if !bytes.ContainsAny(b, signs) {
		return b
	}
	return []byte(Plain(string(b)))
}

// PlainAll spells every string reachable from v (a pointer) by Plain, in place: struct
// fields, slices, arrays, maps' values and byte slices (JSON text). Map keys are names
// and stay.
func PlainAll(v any) {
	if v == nil {
		return
	}
	plainValue(reflect.ValueOf(v))
}

func plainValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			if s := v.String(); strings.ContainsAny(s, signs) {
				v.SetString(Plain(s))
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			plainValue(v.Elem())
		}
	case reflect.Interface:
		switch e := v.Elem(); {
		case v.IsNil():
		case e.Kind() == reflect.Pointer:
			plainValue(e)
		case v.CanSet() && holdsText(e.Type()):
			// A value held in an interface cannot be set in place: copy, spell, put back.
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			plainValue(c)
			v.Set(c)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				plainValue(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.CanSet() && !v.IsNil() {
				v.SetBytes(plainBytes(v.Bytes()))
			}
			return
		}
		fallthrough
	case reflect.Array:
		if !holdsText(v.Type().Elem()) {
			return // numbers: nothing to spell
		}
		for i := range v.Len() {
			plainValue(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() || !holdsText(v.Type().Elem()) {
			return
		}
		it := v.MapRange()
		for it.Next() {
			c := reflect.New(v.Type().Elem()).Elem()
			c.Set(it.Value())
			plainValue(c)
			v.SetMapIndex(it.Key(), c)
		}
	}
}

// holdsText reports whether a value of type t can hold a string or JSON bytes.
func holdsText(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Interface, reflect.Pointer, reflect.Struct, reflect.Map:
		return true
	case reflect.Slice, reflect.Array:
		return t.Elem().Kind() == reflect.Uint8 || holdsText(t.Elem())
	}
	return false
}
