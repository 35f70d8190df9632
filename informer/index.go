package informer

import "listwatch/api"

// IndexFunc computes the values an object is indexed under in one index:
// its namespace, its labels' values, the node a pod runs on... An object
// may have several values, or none.
type IndexFunc func(obj *api.Object) ([]string, error)

// Indexers names the index functions of an Indexer.
type Indexers map[string]IndexFunc

// NamespaceIndex is the index every Indexer has unless told otherwise:
// objects by namespace (client-go's cache.NamespaceIndex).
const NamespaceIndex = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace (client-go's
// cache.MetaNamespaceIndexFunc). Cluster-scoped objects index under "".
func MetaNamespaceIndexFunc(obj *api.Object) ([]string, error) {
	return []string{obj.Metadata.Namespace}, nil
}

// index maps each indexed value to the set of keys indexed under it.
type index map[string]map[string]struct{}

func (ix index) add(value, key string) {
	set := ix[value]
	if set == nil {
		set = map[string]struct{}{}
		ix[value] = set
	}
	set[key] = struct{}{}
}

func (ix index) remove(value, key string) {
	set := ix[value]
	if set == nil {
		return
	}
	delete(set, key)
	if len(set) == 0 {
		delete(ix, value) // no empty sets left behind to leak
	}
}
