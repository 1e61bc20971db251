package filter

import (
	"reflect"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"

	"github.com/kbatch-dev/kbatch/schema"
)

// fields is the projected top-level object of a key or value: the few
// fields an expression reads, in a slice, where a Go map would cost two
// allocations per record. value.amount finds its field through
// FindStringKey, which CEL's interpreter asks first; a missing field goes
// through Find and is "no such key", as for a map. It is a CEL map for
// anything else.
type fields []field

// field is schema's, so a projected Avro record (schema.DecodeValue)
// is fields without a copy.
type field = schema.Field

func (f fields) FindStringKey(k string) (any, bool) {
	for i := len(f) - 1; i >= 0; i-- { // the last of a repeated key wins
		if f[i].Name == k {
			return f[i].Value, true
		}
	}
	return nil, false
}

func (f fields) asMap() ref.Val {
	m := make(map[string]any, len(f))
	for _, e := range f {
		m[e.Name] = e.Value
	}
	return types.DefaultTypeAdapter.NativeToValue(m)
}

func (f fields) ConvertToNative(t reflect.Type) (any, error) { return f.asMap().ConvertToNative(t) }
func (f fields) ConvertToType(t ref.Type) ref.Val            { return f.asMap().ConvertToType(t) }
func (f fields) Equal(other ref.Val) ref.Val                 { return f.asMap().Equal(other) }
func (f fields) Type() ref.Type                              { return types.MapType }
func (f fields) Value() any                                  { return f.asMap().Value() }
func (f fields) Contains(k ref.Val) ref.Val                  { return f.asMap().(traits.Mapper).Contains(k) }
func (f fields) Get(k ref.Val) ref.Val                       { return f.asMap().(traits.Mapper).Get(k) }
func (f fields) Iterator() traits.Iterator                   { return f.asMap().(traits.Mapper).Iterator() }
func (f fields) Size() ref.Val                               { return f.asMap().(traits.Mapper).Size() }

func (f fields) Find(k ref.Val) (ref.Val, bool) {
	if s, ok := k.(types.String); ok {
		if v, found := f.FindStringKey(string(s)); found {
			return types.DefaultTypeAdapter.NativeToValue(v), true
		}
		return nil, false
	}
	return f.asMap().(traits.Mapper).Find(k)
}
