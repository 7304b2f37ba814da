// Command kubelet-schema writes the JSON Schema (draft 2020-12) of the kubelet's configuration file,
// kubelet.config.k8s.io/v1beta1 KubeletConfiguration, from its Go type: every field by its JSON
// name, with the JSON type the kubelet's decoder accepts, and no other field (strict, as
// `podfit check` validates). Run by `make kubelet-schema`; the output is committed under
// schemas/crds/. `kubelet-schema example` prints instead a configuration with every field set, as
// the kubelet's Go type writes it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

type schema = map[string]any

// The types of the configuration that encode themselves (MarshalJSON), as they encode.
var special = map[string]schema{
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration": {"type": "string"},
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":     {"type": []string{"string", "null"}},
	"k8s.io/apimachinery/pkg/api/resource.Quantity": {"type": []string{"string", "number"}},
	// a duration as text, or nanoseconds
	"k8s.io/component-base/logs/api/v1.TimeOrMetaDuration": {"type": []string{"string", "integer"}},
	"k8s.io/apimachinery/pkg/api/resource.QuantityValue":   {"type": []string{"string", "number"}},
}

var marshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

func nullable(s schema) schema {
	out := schema{}
	for k, v := range s {
		out[k] = v
	}
	switch t := s["type"].(type) {
	case string:
		out["type"] = []string{t, "null"}
	case []string:
		if !slices.Contains(t, "null") {
			out["type"] = append(append([]string{}, t...), "null")
		}
	}
	return out
}

func of(t reflect.Type) schema {
	name := t.PkgPath() + "." + t.Name()
	if s, ok := special[name]; ok {
		return s
	}
	if t.Kind() != reflect.Pointer && (t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler)) {
		// its JSON is whatever its MarshalJSON writes, not its fields: it needs an entry in special
		panic(fmt.Sprintf("%s encodes itself: add it to special", name))
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(of(t.Elem()))
	case reflect.Bool:
		return schema{"type": "boolean"}
	case reflect.String:
		return schema{"type": "string"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return schema{"type": "integer"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return schema{"type": "integer", "minimum": 0}
	case reflect.Float32, reflect.Float64:
		return schema{"type": "number"}
	case reflect.Slice, reflect.Array:
		// a nil slice encodes as null
		return schema{"type": []string{"array", "null"}, "items": of(t.Elem())}
	case reflect.Map:
		return schema{"type": []string{"object", "null"}, "additionalProperties": of(t.Elem())}
	case reflect.Interface:
		return schema{}
	case reflect.Struct:
		props := schema{}
		fields(t, props)
		return schema{"type": "object", "properties": props, "additionalProperties": false}
	}
	panic(fmt.Sprintf("no JSON type for %s (%s)", t, t.Kind()))
}

// fields adds the JSON fields of struct t to props: embedded structs without a name of their own
// (inline) contribute theirs, as encoding/json does.
func fields(t reflect.Type, props schema) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(","+opts+",", ",inline,")) {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				fields(ft, props)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		props[name] = of(f.Type)
	}
}

var durT = reflect.TypeOf(metav1.Duration{})
var timeT = reflect.TypeOf(metav1.Time{})

// fill sets every field of v, to the depth given: the example `example` prints, which the
// written schema must accept (tests/test_schema_pf902.py), so that no field's JSON type is guessed
// wrong.
func fill(v reflect.Value, depth int) {
	if depth > 8 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == durT {
			v.Set(reflect.ValueOf(metav1.Duration{Duration: 10 * time.Second}))
			return
		}
		if v.Type() == timeT {
			v.Set(reflect.ValueOf(metav1.Now()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				fill(v.Field(i), depth+1)
			}
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "example" {
		c := kubeletv1beta1.KubeletConfiguration{}
		fill(reflect.ValueOf(&c).Elem(), 0)
		c.APIVersion, c.Kind = "kubelet.config.k8s.io/v1beta1", "KubeletConfiguration"
		out, err := json.Marshal(c)
		if err != nil {
			panic(err)
		}
		os.Stdout.Write(append(out, '\n'))
		return
	}
	root := of(reflect.TypeOf(kubeletv1beta1.KubeletConfiguration{}))
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["title"] = "kubelet.config.k8s.io/v1beta1 KubeletConfiguration (k8s.io/kubelet " + os.Args[1] + ")"
	props := root["properties"].(schema)
	props["apiVersion"] = schema{"const": "kubelet.config.k8s.io/v1beta1"}
	props["kind"] = schema{"const": "KubeletConfiguration"}
	// The type has no metadata; the kubelet drops one with a warning and nothing else, and podfit
	// names a configuration by its metadata.name where one is given.
	props["metadata"] = schema{"type": "object"}
	root["required"] = []string{"apiVersion", "kind"}
	out, err := json.MarshalIndent(root, "", " ")
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(append(out, '\n'))
}
