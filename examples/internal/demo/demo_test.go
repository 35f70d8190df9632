package demo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/internal/leakcheck"
)

func ExamplePrinter() {
	p := demo.NewPrinter(os.Stdout)
	p.Say("event", "%-8s %s", "ADDED", "demo")
	p.Section("next")
	// Output:
	// event         ADDED    demo
	//
	// == next
}

func ExampleConfigMap() {
	obj := demo.ConfigMap("demo", map[string]string{"b": "2", "a": "1"}, nil)
	fmt.Println(obj.Key(), string(obj.Get("data")), demo.Data(obj, "b"))
	// Output:
	// default/demo {"a":"1","b":"2"} 2
}

func TestCable(t *testing.T) {
	defer leakcheck.Check(t)()
	ctx := context.Background()
	_, cms, stop, err := demo.Start(ctx, apiserver.Config{}, client.Config{})
	require.NoError(t, err)
	defer stop()
	_, err = cms.Create(ctx, demo.ConfigMap("demo", nil, nil))
	require.NoError(t, err)

	cable := demo.NewCable(cms)
	list, err := cable.List(ctx, api.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, list.Items, 1)

	cable.Unplug()
	_, err = cable.List(ctx, api.ListOptions{})
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "unplugged List: %v", err)
	_, err = cable.Watch(ctx, api.ListOptions{})
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "unplugged Watch: %v", err)

	cable.Plug()
	w, err := cable.Watch(ctx, api.ListOptions{ResourceVersion: list.Metadata.ResourceVersion})
	require.NoError(t, err)
	w.Stop()
}

// On a shared server a run starts from an object of its own, whatever an
// earlier run left, and leaves nothing behind.
func TestCreateFreshReplacesWhatWasLeft(t *testing.T) {
	defer leakcheck.Check(t)()
	ctx := context.Background()
	_, cms, stop, err := demo.Start(ctx, apiserver.Config{}, client.Config{})
	require.NoError(t, err)
	defer stop()
	left, err := cms.Create(ctx, demo.ConfigMap("demo", map[string]string{"n": "7"}, nil))
	require.NoError(t, err)

	fresh, err := demo.CreateFresh(ctx, cms, demo.ConfigMap("demo", map[string]string{"n": "0"}, nil))
	require.NoError(t, err)
	assert.NotEqual(t, left.Metadata.UID, fresh.Metadata.UID, "a new object, not the one left")
	assert.Equal(t, "0", demo.Data(fresh, "n"))

	demo.CleanUp(ctx, cms, "demo")
	_, err = cms.Get(ctx, "demo")
	assert.True(t, client.IsNotFound(err), "after CleanUp: %v", err)
	_, err = demo.CreateFresh(ctx, cms, demo.ConfigMap("demo", nil, nil))
	require.NoError(t, err, "nothing to delete first")
}
