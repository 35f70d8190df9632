package manager

import (
	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/deployment"
	"listwatch/controllers/gc"
	"listwatch/controllers/kubelet"
	"listwatch/controllers/namespace"
	"listwatch/controllers/replicaset"
	"listwatch/controllers/serviceaccount"
	"listwatch/controllers/website"
	"listwatch/informer"
)

// builder is what every controller is built from: the client, the shared
// informers, the settings and the Events broadcaster.
type builder struct {
	cfg      Config
	client   *client.Client
	gcKinds  []Kind
	settings controllers.Settings
	events   *controllers.Broadcaster
	inf      func(api.GroupVersionResource) (*informer.SharedIndexInformer, error)
}

// informers returns the shared informers of gvrs, in order.
func (b builder) informers(gvrs ...api.GroupVersionResource) ([]*informer.SharedIndexInformer, error) {
	out := make([]*informer.SharedIndexInformer, len(gvrs))
	for i, gvr := range gvrs {
		inf, err := b.inf(gvr)
		if err != nil {
			return nil, err
		}
		out[i] = inf
	}
	return out, nil
}

// builders builds each controller by name (kube-controller-manager's
// NewControllerDescriptors, one constructor per controller).
var builders = map[string]func(builder) (controller, error){
	Deployment: func(b builder) (controller, error) {
		i, err := b.informers(deployment.Deployments, deployment.ReplicaSets)
		if err != nil {
			return controller{}, err
		}
		c, err := deployment.New(deployment.Options{Client: b.client, Deployments: i[0], ReplicaSets: i[1],
			Events: b.events.NewRecorder("deployment-controller"), Settings: b.settings})
		if err != nil {
			return controller{}, err
		}
		return controller{c.Run, c.Queue}, nil
	},
	ReplicaSet: func(b builder) (controller, error) {
		i, err := b.informers(replicaset.ReplicaSets, replicaset.Pods)
		if err != nil {
			return controller{}, err
		}
		c, err := replicaset.New(replicaset.Options{Client: b.client, ReplicaSets: i[0], Pods: i[1],
			Events: b.events.NewRecorder("replicaset-controller"), Settings: b.settings})
		if err != nil {
			return controller{}, err
		}
		return controller{c.Run, c.Queue}, nil
	},
	Kubelet: func(b builder) (controller, error) {
		i, err := b.informers(kubelet.Pods)
		if err != nil {
			return controller{}, err
		}
		k, err := kubelet.New(kubelet.Options{Client: b.client, Pods: i[0], NodeName: b.cfg.NodeName,
			StartDelay: b.cfg.KubeletStartDelay, Settings: b.settings})
		if err != nil {
			return controller{}, err
		}
		return controller{k.Run, k.Queue}, nil
	},
	GC: func(b builder) (controller, error) {
		var rs []gc.Resource
		for _, k := range b.gcKinds {
			i, err := b.informers(k.GVR)
			if err != nil {
				return controller{}, err
			}
			rs = append(rs, gc.Resource{GVR: k.GVR, Kind: k.Kind, Namespaced: k.Namespaced, Informer: i[0]})
		}
		opts := gc.Options{Client: b.client, Resources: rs, Settings: b.settings}
		if b.cfg.GCWatchAll {
			opts.Discover = &gc.Discovery{
				Resources: b.client.ServerPreferredResources,
				NewInformer: func(gvr api.GroupVersionResource) (*informer.SharedIndexInformer, error) {
					return informer.NewSharedIndexInformer(b.client.Resource(gvr), informer.Options{Clock: b.cfg.Clock})
				},
			}
		}
		g, err := gc.New(opts)
		if err != nil {
			return controller{}, err
		}
		return controller{g.Run, g.Queue}, nil
	},
	Namespace: func(b builder) (controller, error) {
		i, err := b.informers(namespace.Namespaces)
		if err != nil {
			return controller{}, err
		}
		c, err := namespace.New(namespace.Options{Client: b.client, Namespaces: i[0], Settings: b.settings})
		if err != nil {
			return controller{}, err
		}
		return controller{c.Run, c.Queue}, nil
	},
	ServiceAccount: func(b builder) (controller, error) {
		i, err := b.informers(serviceaccount.Namespaces, serviceaccount.ServiceAccounts)
		if err != nil {
			return controller{}, err
		}
		c, err := serviceaccount.New(serviceaccount.Options{Client: b.client, Namespaces: i[0], ServiceAccounts: i[1], Settings: b.settings})
		if err != nil {
			return controller{}, err
		}
		return controller{c.Run, c.Queue}, nil
	},
	Website: func(b builder) (controller, error) {
		op, err := website.New(website.Options{Client: b.client, Settings: b.settings})
		if err != nil {
			return controller{}, err
		}
		return controller{op.Run, op.Queue}, nil
	},
}
