package proxy

import (
	"reflect"
	"testing"

	"github.com/mcpgate/mcpgate/config"
)

// Every gateway setting is either applied by a reload or reported as
// needing a restart: a key added to config.Config later and forgotten here
// would otherwise change in the file and silently not in mcpgate.
func TestDiffConfigsCoversEverySetting(t *testing.T) {
	base := loadTestConfig(t, `{"mcpServers": {"one": {"command": "o"}}}`)
	handledElsewhere := map[string]bool{"Servers": true, "Warnings": true, "File": true, "SHA256": true}
	ct := reflect.TypeFor[config.Config]()
	var leaves [][]int
	var collect func(index []int, t reflect.Type)
	collect = func(index []int, t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || (len(index) == 0 && handledElsewhere[f.Name]) {
				continue
			}
			idx := append(append([]int(nil), index...), i)
			if f.Type.Kind() == reflect.Struct {
				collect(idx, f.Type)
				continue
			}
			leaves = append(leaves, idx)
		}
	}
	collect(nil, ct)

	for _, idx := range leaves {
		next := *base
		f := reflect.ValueOf(&next).Elem().FieldByIndex(idx)
		name := ""
		for i := range idx {
			name += "." + ct.FieldByIndex(idx[:i+1]).Name
		}
		name = name[1:]
		if !changeValue(f) {
			t.Errorf("config.Config field %s (%s): the test cannot change a %s; teach it", name, f.Type(), f.Kind())
			continue
		}
		ch, _, err := diffConfigs(base, &next)
		if err == nil && len(ch.Settings) == 0 && len(ch.NeedRestart) == 0 {
			t.Errorf("config.Config field %s changed, and a reload neither applies it nor says it needs a restart: add it to liveSettings or restartSettings (proxy/reloaddiff.go)", name)
		}
	}
}

// changeValue sets v to a value different from the one it has.
func changeValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Slice:
		// An element of its own changed too: fmt prints [] and [""] alike.
		elem := reflect.New(v.Type().Elem()).Elem()
		changeValue(elem)
		v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, v.Len()+1), append(sliceValues(v), elem)...))
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			return false
		}
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("changed-by-test").Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
		v.Set(m)
	default:
		return false
	}
	return true
}

func sliceValues(v reflect.Value) []reflect.Value {
	out := make([]reflect.Value, v.Len())
	for i := range out {
		out[i] = v.Index(i)
	}
	return out
}
