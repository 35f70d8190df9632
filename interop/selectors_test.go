package interop_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"listwatch/internal/leakcheck"
)

// TestSelectorsOnListAndWatch checks label and field selectors through
// client-go, including the transitions the real server reports: an object
// that stops matching arrives as DELETED (carrying its last matching
// state), one that starts matching again as ADDED.
func TestSelectorsOnListAndWatch(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t)
	w, r := srv.writeClient(t), srv.readClient(t)
	ctx := context.Background()
	createNamespace(t, w, "sel")
	cms := w.CoreV1().ConfigMaps("sel")
	selected := map[string]string{"app": "selected"}
	other := map[string]string{"app": "other"}
	for _, cm := range []*corev1.ConfigMap{
		configMap("sel", "one", "1", selected),
		configMap("sel", "two", "2", other),
		configMap("sel", "three", "3", selected),
	} {
		_, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	_, err := w.CoreV1().ConfigMaps("default").Create(ctx, configMap("default", "one", "d", selected), metav1.CreateOptions{})
	require.NoError(t, err)

	names := func(items []corev1.ConfigMap) []string {
		var out []string
		for _, cm := range items {
			out = append(out, cm.Namespace+"/"+cm.Name)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		ns   string
		opts metav1.ListOptions
		want []string
	}{
		{"label equality", "sel", metav1.ListOptions{LabelSelector: "app=selected"}, []string{"sel/one", "sel/three"}},
		{"label inequality", "sel", metav1.ListOptions{LabelSelector: "app!=selected"}, []string{"sel/two"}},
		{"label set", "sel", metav1.ListOptions{LabelSelector: "app in (other,nothing)"}, []string{"sel/two"}},
		{"label exists", "sel", metav1.ListOptions{LabelSelector: "app"}, []string{"sel/one", "sel/three", "sel/two"}},
		{"field name", "sel", metav1.ListOptions{FieldSelector: "metadata.name=three"}, []string{"sel/three"}},
		{"field name all namespaces", "", metav1.ListOptions{FieldSelector: "metadata.name=one"}, []string{"default/one", "sel/one"}},
		{"field namespace", "", metav1.ListOptions{FieldSelector: "metadata.namespace=default", LabelSelector: "app=selected"}, []string{"default/one"}},
		{"field and label", "sel", metav1.ListOptions{FieldSelector: "metadata.name!=one", LabelSelector: "app=selected"}, []string{"sel/three"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := r.CoreV1().ConfigMaps(tc.ns).List(ctx, tc.opts)
			require.NoError(t, err)
			assert.ElementsMatch(t, tc.want, names(list.Items))
		})
	}

	// Watches from "now", one per selector, then a scripted history.
	list, err := r.CoreV1().ConfigMaps("sel").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	wctx, cancel := context.WithTimeout(ctx, safetyTimeout)
	defer cancel()
	labelWatch, err := r.CoreV1().ConfigMaps("sel").Watch(wctx, metav1.ListOptions{
		LabelSelector: "app=selected", ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	defer labelWatch.Stop()
	fieldWatch, err := r.CoreV1().ConfigMaps("sel").Watch(wctx, metav1.ListOptions{
		FieldSelector: "metadata.name=two", ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	defer fieldWatch.Stop()

	update := func(name string, labels map[string]string, value string) *corev1.ConfigMap {
		cur, err := cms.Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		cur.Labels, cur.Data["k"] = labels, value
		out, err := cms.Update(ctx, cur, metav1.UpdateOptions{})
		require.NoError(t, err)
		return out
	}
	update("one", selected, "1b")                                                                 // label: MODIFIED
	leaving := update("one", other, "1c")                                                         // label: DELETED, with the previous state
	update("one", other, "1d")                                                                    // label: nothing (not matching)
	back := update("one", selected, "1e")                                                         // label: ADDED, current state
	update("two", other, "2b")                                                                    // field: MODIFIED; label: nothing
	require.NoError(t, cms.Delete(ctx, "three", metav1.DeleteOptions{}))                          // label: DELETED
	require.NoError(t, cms.Delete(ctx, "two", metav1.DeleteOptions{}))                            // field: DELETED
	end, err := cms.Create(ctx, configMap("sel", "two", "end", selected), metav1.CreateOptions{}) // both: ADDED
	require.NoError(t, err)

	expectEvents(t, labelWatch, []seen{
		{watch.Modified, "one", "1b", "selected", ""},
		// The real server's DELETED for "stopped matching" carries the last
		// matching state stamped with the resourceVersion of the change.
		{watch.Deleted, "one", "1b", "selected", leaving.ResourceVersion},
		{watch.Added, "one", "1e", "selected", back.ResourceVersion},
		{watch.Deleted, "three", "3", "selected", ""},
		{watch.Added, "two", "end", "selected", end.ResourceVersion},
	})
	expectEvents(t, fieldWatch, []seen{
		{watch.Modified, "two", "2b", "other", ""},
		{watch.Deleted, "two", "2b", "other", ""},
		{watch.Added, "two", "end", "selected", end.ResourceVersion},
	})
}

// seen is what a selector test checks of one watch event.
type seen struct {
	typ   watch.EventType
	name  string
	value string
	app   string
	rv    string // compared only when set
}

// expectEvents reads len(want) events and compares them with want.
func expectEvents(t *testing.T, w watch.Interface, want []seen) {
	t.Helper()
	var got []seen
	for _, wnt := range want {
		ev := nextEvent(t, w)
		cm, ok := ev.Object.(*corev1.ConfigMap)
		require.True(t, ok, "%s event with %T: %v", ev.Type, ev.Object, ev.Object)
		s := seen{ev.Type, cm.Name, cm.Data["k"], cm.Labels["app"], ""}
		if wnt.rv != "" {
			s.rv = cm.ResourceVersion
		}
		got = append(got, s)
	}
	assert.Equal(t, want, got)
}
