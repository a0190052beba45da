package bundle

import (
	"bytes"
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// NonFinite is a number that JSON cannot hold (NaN, +Inf, −Inf), found at Path ("a.b[0].c",
// the document's JSON keys) while marshalling.
type NonFinite struct {
	Path  string
	Value float64
}

// MarshalFinite is json.MarshalIndent(v, "", "  ") except that every NaN or ±Inf number is
// written as null (JSON has no Inf; encoding/json refuses them and the whole file would be
// lost) and reported with its path, so the caller can say why in words. For values without
// such numbers the bytes are exactly encoding/json's.
func MarshalFinite(v any) ([]byte, []NonFinite, error) {
	var nf []NonFinite
	tree, err := finiteTree(reflect.ValueOf(v), "", &nf)
	if err != nil {
		return nil, nil, err
	}
	b, err := json.MarshalIndent(tree, "", "  ")
	return b, nf, err
}

// object is a JSON object whose keys keep their order (struct fields in declaration order).
type object []member

type member struct {
	key string
	val any
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.val)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// finiteTree turns v into values encoding/json marshals as it would v, with non-finite
// numbers replaced by nil and recorded.
func finiteTree(v reflect.Value, path string, nf *[]NonFinite) (any, error) {
	if !v.IsValid() {
		return nil, nil
	}
	t := v.Type()
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && (t.Implements(marshalerType) || t.Implements(textMarshalerType)) {
		b, err := json.Marshal(v.Interface())
		return json.RawMessage(b), err
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		if v.Kind() == reflect.Pointer && (t.Implements(marshalerType) || t.Implements(textMarshalerType)) {
			b, err := json.Marshal(v.Interface())
			return json.RawMessage(b), err
		}
		return finiteTree(v.Elem(), path, nf)
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			*nf = append(*nf, NonFinite{Path: path, Value: f})
			return nil, nil
		}
		return v.Interface(), nil
	case reflect.Struct:
		var o object
		if err := structMembers(v, path, nf, &o); err != nil {
			return nil, err
		}
		return o, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		type kv struct {
			k string
			v reflect.Value
		}
		var kvs []kv
		for it := v.MapRange(); it.Next(); {
			k := it.Key()
			var ks string
			switch k.Kind() {
			case reflect.String:
				ks = k.String()
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				ks = strconv.FormatInt(k.Int(), 10)
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				ks = strconv.FormatUint(k.Uint(), 10)
			default:
				b, err := json.Marshal(v.Interface()) // what encoding/json does with such keys
				return json.RawMessage(b), err
			}
			kvs = append(kvs, kv{ks, it.Value()})
		}
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
		o := make(object, 0, len(kvs))
		for _, e := range kvs {
			val, err := finiteTree(e.v, join(path, e.k), nf)
			if err != nil {
				return nil, err
			}
			o = append(o, member{e.k, val})
		}
		return o, nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil, nil
		}
		if t.Elem().Kind() == reflect.Uint8 && v.Kind() == reflect.Slice {
			return v.Interface(), nil // base64, as encoding/json
		}
		out := make([]any, v.Len())
		for i := range out {
			e, err := finiteTree(v.Index(i), path+"["+strconv.Itoa(i)+"]", nf)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	}
	return v.Interface(), nil
}

// structMembers appends a struct's fields as encoding/json would write them: exported,
// named by their tag, "-" skipped, omitempty honoured, untagged embedded structs inlined.
func structMembers(v reflect.Value, path string, nf *[]NonFinite, o *object) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv, ft = fv.Elem(), ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := structMembers(fv, path, nf, o); err != nil {
					return err
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if strings.Contains(","+opts+",", ",omitempty,") && isEmpty(fv) {
			continue
		}
		if k := fv.Kind(); strings.Contains(","+opts+",", ",string,") && (k == reflect.String || k == reflect.Bool ||
			(k >= reflect.Int && k <= reflect.Uint64) || k == reflect.Float32 || k == reflect.Float64) {
			// The ",string" option: the value's JSON, quoted once more.
			b, err := json.Marshal(fv.Interface())
			if err != nil {
				return err
			}
			*o = append(*o, member{name, string(b)})
			continue
		}
		val, err := finiteTree(fv, join(path, name), nf)
		if err != nil {
			return err
		}
		*o = append(*o, member{name, val})
	}
	return nil
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
