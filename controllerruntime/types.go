package controllerruntime

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"listwatch/controllers/website"
)

// GroupVersion is the Website's API group and version, the one the
// CustomResourceDefinition in listwatch/controllers/website declares.
var GroupVersion = schema.GroupVersion{Group: "workshop.example.com", Version: "v1"}

// Website is the custom resource, as a kubebuilder project's api/v1
// package declares it: TypeMeta and ObjectMeta inline, then spec and
// status. Its JSON is what the CRD's schema allows.
type Website struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WebsiteSpec   `json:"spec"`
	Status WebsiteStatus `json:"status,omitempty"`
}

// WebsiteSpec is what the user asks for: a page, how many copies serve
// it, and with which image (nginx when empty).
type WebsiteSpec struct {
	Message  string `json:"message"`
	Replicas *int32 `json:"replicas,omitempty"`
	Image    string `json:"image,omitempty"`
}

// WebsiteStatus is what the reconciler last saw. Conditions are
// metav1.Condition, the type kubebuilder scaffolds; the CRD's schema has
// no observedGeneration in a condition, so the reconciler leaves it 0
// (omitted) rather than have the server prune it.
type WebsiteStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	ReadyReplicas      int32              `json:"readyReplicas,omitempty"`
	Ready              string             `json:"ready,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

// WebsiteList is a page of Websites, as a LIST returns it.
type WebsiteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Website `json:"items"`
}

// DeepCopyInto copies w into out; controller-gen would write this
// (zz_generated.deepcopy.go), and it is short enough to write by hand.
func (w *Website) DeepCopyInto(out *Website) {
	*out = *w
	out.TypeMeta = w.TypeMeta
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if w.Spec.Replicas != nil {
		r := *w.Spec.Replicas
		out.Spec.Replicas = &r
	}
	if w.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(w.Status.Conditions))
		for i := range w.Status.Conditions {
			w.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

// DeepCopy returns a copy of w.
func (w *Website) DeepCopy() *Website {
	if w == nil {
		return nil
	}
	out := new(Website)
	w.DeepCopyInto(out)
	return out
}

// DeepCopyObject makes Website a runtime.Object.
func (w *Website) DeepCopyObject() runtime.Object { return w.DeepCopy() }

// DeepCopyObject makes WebsiteList a runtime.Object.
func (l *WebsiteList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &WebsiteList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Website, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// NewScheme is client-go's scheme (the built-in kinds) with Website and
// WebsiteList added: what a manager's client, cache and owner references
// resolve kinds with.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, fmt.Errorf("controllerruntime: client-go's scheme: %w", err)
	}
	s.AddKnownTypes(GroupVersion, &Website{}, &WebsiteList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return s, nil
}

// CRD is the Website's CustomResourceDefinition, the same one the
// listwatch operator installs (listwatch/controllers/website.CRD), as the
// typed object envtest installs.
func CRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal([]byte(website.CRD), crd); err != nil {
		return nil, fmt.Errorf("controllerruntime: the Website CRD: %w", err)
	}
	return crd, nil
}
