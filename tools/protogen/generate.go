package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// protoFiles are the generated.proto files of the groups listwatch serves;
// the compiler pulls in what they import (meta/v1, runtime, resource,
// intstr, schema).
var protoFiles = []string{
	"k8s.io/api/core/v1/generated.proto",
	"k8s.io/api/apps/v1/generated.proto",
	"k8s.io/api/autoscaling/v1/generated.proto",
	"k8s.io/api/batch/v1/generated.proto",
	"k8s.io/api/authorization/v1/generated.proto",
	"k8s.io/api/coordination/v1/generated.proto",
	"k8s.io/api/events/v1/generated.proto",
	"k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/generated.proto",
}

// rootTypes are the Go types whose fields the JSON table describes: every
// kind listwatch serves, its list, and the meta kinds that travel on the
// wire (Status, DeleteOptions, WatchEvent). Their fields are walked
// recursively.
var rootTypes = []any{
	corev1.Namespace{}, corev1.NamespaceList{},
	corev1.ConfigMap{}, corev1.ConfigMapList{},
	corev1.Secret{}, corev1.SecretList{},
	corev1.Pod{}, corev1.PodList{},
	corev1.Service{}, corev1.ServiceList{},
	corev1.Event{}, corev1.EventList{},
	corev1.ServiceAccount{}, corev1.ServiceAccountList{},
	corev1.PodTemplate{}, corev1.PodTemplateList{},
	appsv1.Deployment{}, appsv1.DeploymentList{},
	appsv1.ReplicaSet{}, appsv1.ReplicaSetList{},
	batchv1.CronJob{}, batchv1.CronJobList{},
	eventsv1.Event{}, eventsv1.EventList{},
	coordinationv1.Lease{}, coordinationv1.LeaseList{},
	autoscalingv1.Scale{},
	authorizationv1.SelfSubjectAccessReview{},
	apiextensionsv1.CustomResourceDefinition{}, apiextensionsv1.CustomResourceDefinitionList{},
	metav1.Status{}, metav1.DeleteOptions{}, metav1.WatchEvent{},
	metav1.List{}, metav1.PartialObjectMetadata{}, metav1.PartialObjectMetadataList{},
}

// moduleDirs finds where the go command keeps the three modules whose
// .proto files we compile, at the versions this module's go.mod pins.
func moduleDirs() (map[string]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Dir}}", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/apiextensions-apiserver").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	dirs := map[string]string{}
	for line := range strings.Lines(string(out)) {
		path, dir, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || dir == "" {
			return nil, fmt.Errorf("go list -m: no directory for %q (run go mod download)", line)
		}
		dirs[path] = dir
	}
	return dirs, nil
}

// descriptorSet compiles protoFiles into a FileDescriptorSet, without
// source info, files in dependency order, marshalled deterministically.
func descriptorSet() ([]byte, error) {
	dirs, err := moduleDirs()
	if err != nil {
		return nil, err
	}
	open := func(name string) (io.ReadCloser, error) {
		for mod, dir := range dirs {
			if rest, ok := strings.CutPrefix(name, mod+"/"); ok {
				return os.Open(filepath.Join(dir, filepath.FromSlash(rest)))
			}
		}
		return nil, fmt.Errorf("%s: not in k8s.io/api, k8s.io/apimachinery or k8s.io/apiextensions-apiserver: %w", name, os.ErrNotExist)
	}
	c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{Accessor: open}}
	files, err := c.Compile(context.Background(), protoFiles...)
	if err != nil {
		return nil, err
	}
	set := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imports := fd.Imports()
		for i := range imports.Len() {
			add(imports.Get(i).FileDescriptor)
		}
		fdp := protodesc.ToFileDescriptorProto(fd)
		fdp.SourceCodeInfo = nil
		set.File = append(set.File, fdp)
	}
	for _, f := range files {
		add(f)
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(set)
}

// protoPackage maps a Go package path to its .proto package:
// k8s.io/api/core/v1 -> k8s.io.api.core.v1,
// k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1 ->
// k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.
func protoPackage(goPkg string) string {
	return strings.NewReplacer("/", ".", "-", "_").Replace(goPkg)
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// fieldTable walks rootTypes and writes, for every message reachable from
// them, how its fields appear in Kubernetes' JSON, in Go struct order:
//
//	message k8s.io.api.core.v1.ConfigMap
//	field metadata 1 json=metadata
//	field immutable 4 json=immutable omitempty ptr
//	custom k8s.io.apimachinery.pkg.apis.meta.v1.Time
//
// json=- inline marks a Go struct embedded inline in JSON; ptr marks a
// pointer (written only when set), every other singular field is written
// by Kubernetes' protobuf marshallers even when zero; omitzero marks a
// field JSON leaves out when zero (the json tag option); custom marks a
// type with its own JSON form (hand-written in the transcoder).
func fieldTable(set []byte) ([]byte, error) {
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(set, &fds); err != nil {
		return nil, err
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString("# Code generated by tools/protogen from k8s.io/api, k8s.io/apimachinery and k8s.io/apiextensions-apiserver; DO NOT EDIT.\n")
	buf.WriteString("# How each protobuf field of the served kinds appears in Kubernetes' JSON (see tools/protogen).\n")
	done := map[reflect.Type]bool{}
	var errs []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Map {
				walk(t.Key())
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || done[t] {
			return
		}
		done[t] = true
		name := protoPackage(t.PkgPath()) + "." + t.Name()
		if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
			fmt.Fprintf(&buf, "custom %s\n", name)
			return
		}
		d, err := files.FindDescriptorByName(protoreflect.FullName(name))
		md, ok := d.(protoreflect.MessageDescriptor)
		if err != nil || !ok {
			errs = append(errs, fmt.Sprintf("%s: no such message in the descriptor set", name))
			return
		}
		fmt.Fprintf(&buf, "message %s\n", name)
		var nested []reflect.Type
		for i := range t.NumField() {
			f := t.Field(i)
			tag, ok := f.Tag.Lookup("protobuf")
			if !ok || tag == "-" {
				continue
			}
			parts := strings.Split(tag, ",")
			num := -1
			if len(parts) >= 2 {
				num, _ = strconv.Atoi(parts[1])
			}
			fd := md.Fields().ByNumber(protoreflect.FieldNumber(num))
			if fd == nil {
				errs = append(errs, fmt.Sprintf("%s.%s: protobuf tag %q names no field of the message", name, f.Name, tag))
				continue
			}
			pname := string(fd.Name())
			jname, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			line := fmt.Sprintf("field %s %d json=%s", pname, num, jname)
			switch {
			case jname == "-":
				errs = append(errs, fmt.Sprintf("%s.%s: a protobuf field that JSON leaves out", name, f.Name))
				continue
			case jname == "" && !f.Anonymous:
				errs = append(errs, fmt.Sprintf("%s.%s: no JSON name", name, f.Name))
				continue
			}
			// encoding/json inlines an embedded struct without a JSON name.
			if jname == "" || strings.Contains(","+opts+",", ",inline,") {
				line = fmt.Sprintf("field %s %d json=- inline", pname, num)
			}
			if strings.Contains(","+opts+",", ",omitempty,") {
				line += " omitempty"
			}
			if strings.Contains(","+opts+",", ",omitzero,") {
				line += " omitzero"
			}
			if f.Type.Kind() == reflect.Pointer {
				line += " ptr"
			}
			buf.WriteString(line + "\n")
			nested = append(nested, f.Type)
		}
		for _, n := range nested {
			walk(n)
		}
	}
	for _, r := range rootTypes {
		walk(reflect.TypeOf(r))
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return nil, fmt.Errorf("unexpected Go types:\n%s", strings.Join(errs, "\n"))
	}
	return buf.Bytes(), nil
}
