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
