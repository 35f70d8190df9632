package embedded_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"listwatch/etcd/embedded"
)

// One etcd member in this process, on free loopback ports, with its data in
// a directory: starting it again with the same directory brings back every
// key and revision.
func Example() {
	dir, err := os.MkdirTemp("", "embedded-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a hang gets near it
	defer cancel()

	member, err := embedded.Start(ctx, embedded.Config{DataDir: dir, NoFsync: true, LogLevel: "fatal"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer member.Close()
	cli, err := embedded.NewClient([]string{member.ClientURL()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cli.Close()

	put, err := cli.Put(ctx, "/registry/configmaps/default/demo", `{"kind":"ConfigMap"}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	get, err := cli.Get(ctx, "/registry/configmaps/default/demo")
	if err != nil {
		fmt.Println(err)
		return
	}
	kv := get.Kvs[0]
	fmt.Println("revision after the put:", put.Header.Revision)
	fmt.Println("create_revision", kv.CreateRevision, "mod_revision", kv.ModRevision, "version", kv.Version)
	// Output:
	// revision after the put: 2
	// create_revision 2 mod_revision 2 version 1
}
