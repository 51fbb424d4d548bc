package helm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// crdGroup is the API group of the Prometheus Operator's custom resources, which have no Go
// types in k8s.io/api and are decoded into unstructured objects.
const crdGroup = "monitoring.coreos.com"

// manifests is one rendering, decoded.
type manifests struct {
	typed  []runtime.Object
	custom []*unstructured.Unstructured
}

// newStrictDecoder decodes YAML into the built-in types the chart renders and fails on unknown
// or duplicate fields, the way the API server's strict field validation does.
func newStrictDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		appsv1.AddToScheme, autoscalingv2.AddToScheme, corev1.AddToScheme,
		networkingv1.AddToScheme, policyv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Yaml: true, Strict: true})
}

// decodeAll splits a helm template output into documents and decodes each strictly.
func decodeAll(t *testing.T, out []byte) manifests {
	t.Helper()
	dec := newStrictDecoder(t)
	reader := utilyaml.NewYAMLReader(bufioReader(out))
	var m manifests
	for range 1000 {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return m
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		if err := m.add(dec, doc); err != nil {
			t.Fatalf("%v\n---\n%s", err, doc)
		}
	}
	t.Fatal("more than 1000 documents")
	return m
}

func (m *manifests) add(dec runtime.Decoder, doc []byte) error {
	var meta metav1.TypeMeta
	if err := sigsyaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	gv, err := schema.ParseGroupVersion(meta.APIVersion)
	if err != nil {
		return err
	}
	if gv.Group == crdGroup {
		js, err := sigsyaml.YAMLToJSONStrict(doc)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return err
		}
		m.custom = append(m.custom, u)
		return nil
	}
	obj, _, err := dec.Decode(doc, nil, nil)
	if err != nil {
		return fmt.Errorf("strict decode of %s %s: %w", meta.APIVersion, meta.Kind, err)
	}
	m.typed = append(m.typed, obj)
	return nil
}

// stripComments drops full-line YAML comments, so a document holding only helm's
// "# Source:" line counts as empty.
func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for line := range strings.SplitSeq(string(doc), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line + "\n")
		}
	}
	return b.Bytes()
}

// find returns the object of type T with the given name, failing the test when absent.
func find[T interface {
	runtime.Object
	GetName() string
}](t *testing.T, m manifests, name string) T {
	t.Helper()
	for _, o := range m.typed {
		if v, ok := o.(T); ok && v.GetName() == name {
			return v
		}
	}
	var zero T
	t.Fatalf("no %T named %q rendered", zero, name)
	return zero
}

// count returns how many objects of type T were rendered.
func count[T runtime.Object](m manifests) int {
	n := 0
	for _, o := range m.typed {
		if _, ok := o.(T); ok {
			n++
		}
	}
	return n
}

// customByKind returns the custom resources of a kind.
func (m manifests) customByKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, u := range m.custom {
		if u.GetKind() == kind {
			out = append(out, u)
		}
	}
	return out
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
