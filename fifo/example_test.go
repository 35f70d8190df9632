package fifo_test

import (
	"context"
	"fmt"
	"os"

	"listwatch/api"
	"listwatch/fifo"
	"listwatch/narrate"
)

func configMap(name, rv string) *api.Object {
	return &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{
		Namespace: "default", Name: name, ResourceVersion: rv,
	}}
}

// show prints one popped item as "key: Type@rv ...".
func show(d fifo.Deltas, _ bool) error {
	key, err := fifo.KeyOf(d)
	if err != nil {
		return err
	}
	fmt.Print(key + ":")
	for _, x := range d {
		switch o := x.Object.(type) {
		case *api.Object:
			fmt.Printf(" %s@%s", x.Type, o.Metadata.ResourceVersion)
		case fifo.DeletedFinalStateUnknown:
			fmt.Printf(" %s(tombstone of @%s)", x.Type, o.Obj.Metadata.ResourceVersion)
		}
	}
	fmt.Println()
	return nil
}

// The same five events through both queues: DeltaFIFO gathers foo's three
// versions into one item, RealFIFO hands them out in arrival order.
func Example() {
	for _, q := range []fifo.Queue{fifo.NewDeltaFIFO(fifo.Options{}), fifo.NewRealFIFO(fifo.Options{})} {
		fmt.Printf("%T\n", q)
		for _, o := range []*api.Object{configMap("foo", "10"), configMap("bar", "1"),
			configMap("foo", "11"), configMap("foo", "13"), configMap("zab", "30")} {
			_ = q.Add(o)
		}
		for q.Len() > 0 {
			_ = q.Pop(context.Background(), show)
		}
	}
	// Output:
	// *fifo.DeltaFIFO
	// default/foo: Added@10 Added@11 Added@13
	// default/bar: Added@1
	// default/zab: Added@30
	// *fifo.RealFIFO
	// default/foo: Added@10
	// default/bar: Added@1
	// default/foo: Added@11
	// default/foo: Added@13
	// default/zab: Added@30
}

// cache is a stand-in for the informer's Indexer.
type cache map[string]*api.Object

func (c cache) ListKeys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

func (c cache) GetByKey(key string) (*api.Object, bool) { o, ok := c[key]; return o, ok }

// A re-list after the watch broke: "gone" was deleted while we were away,
// so Replace reports it with a tombstone carrying the cached state.
func ExampleDeltaFIFO_Replace() {
	known := cache{"default/gone": configMap("gone", "4")}
	q := fifo.NewDeltaFIFO(fifo.Options{KnownObjects: known})
	_ = q.Replace([]*api.Object{configMap("kept", "7")}, "9")
	for q.Len() > 0 {
		_ = q.Pop(context.Background(), show)
	}
	// Output:
	// default/kept: Replaced@7
	// default/gone: Deleted(tombstone of @4)
}

// HasSynced waits for the whole initial list to be popped.
func ExampleRealFIFO_HasSynced() {
	q := fifo.NewRealFIFO(fifo.Options{})
	_ = q.Replace([]*api.Object{configMap("a", "1"), configMap("b", "2")}, "2")
	for q.Len() > 0 {
		_ = q.Pop(context.Background(), func(d fifo.Deltas, initial bool) error {
			key, _ := fifo.KeyOf(d)
			fmt.Println("popped", key, "initial:", initial)
			return nil
		})
		fmt.Println("synced:", q.HasSynced())
	}
	// Output:
	// popped default/a initial: true
	// synced: false
	// popped default/b initial: true
	// synced: true
}

// With a Tracer the queue narrates each delta it queues and pops.
func ExampleOptions_tracer() {
	tr := narrate.New(os.Stdout, narrate.WithoutTimes())
	q := fifo.NewDeltaFIFO(fifo.Options{Tracer: tr})
	_ = q.Add(configMap("foo", "1"))
	_ = q.Update(configMap("foo", "2"))
	_ = q.Pop(context.Background(), func(fifo.Deltas, bool) error { return nil })
	// Output:
	// queue         queued Added default/foo (1 delta)
	// queue         queued Updated default/foo (2 deltas)
	// queue         popped default/foo [Added Updated] (0 keys left)
}
