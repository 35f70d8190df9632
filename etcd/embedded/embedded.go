package embedded

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// DefaultProgressNotifyInterval is how often etcd sends an idle watch a
// progress notification when the member is started here. etcd's own default
// is 10 minutes; the watch cache turns each one into bookmarks, so a few
// seconds keeps an idle cache's revision close to the cluster's.
const DefaultProgressNotifyInterval = 5 * time.Second

// Config describes one member.
type Config struct {
	// Name is the member's name in the cluster (default "default").
	Name string
	// DataDir holds the member's write-ahead log and database. Starting
	// again with the same directory brings back every key and revision.
	DataDir string
	// ClientURL and PeerURL are where the member serves clients and other
	// members, e.g. "http://127.0.0.1:2379"; empty picks a free loopback
	// port (FreeURL).
	ClientURL, PeerURL string
	// InitialCluster lists every member of a new cluster as
	// "name=peerURL,..."; empty means a cluster of this member alone. It is
	// ignored when DataDir already holds a member.
	InitialCluster string
	// ProgressNotifyInterval is etcd's --watch-progress-notify-interval
	// (default DefaultProgressNotifyInterval).
	ProgressNotifyInterval time.Duration
	// NoFsync skips fsync (etcd's --unsafe-no-fsync): much faster on a busy
	// disk, and still durable across a clean Close, but a crash can lose
	// the last writes. Tests set it; a real member must not.
	NoFsync bool
	// LogLevel is etcd's log level (default "error": etcd is chatty).
	LogLevel string
}

// Server is one running member.
type Server struct {
	etcd      *embed.Etcd
	closing   *atomic.Bool // set by Close: etcd's own stop errors are dropped
	clientURL string
	peerURL   string
	name      string
}

// Start starts a member and waits until it has joined its cluster and can
// serve (or ctx ends). For a new cluster of several members, start them all
// at once (StartCluster does): each waits for a quorum.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("embedded etcd: DataDir is required")
	}
	if cfg.Name == "" {
		cfg.Name = "default"
	}
	var err error
	if cfg.ClientURL == "" {
		if cfg.ClientURL, err = FreeURL(); err != nil {
			return nil, err
		}
	}
	if cfg.PeerURL == "" {
		if cfg.PeerURL, err = FreeURL(); err != nil {
			return nil, err
		}
	}
	if cfg.InitialCluster == "" {
		cfg.InitialCluster = cfg.Name + "=" + cfg.PeerURL
	}
	if cfg.ProgressNotifyInterval <= 0 {
		cfg.ProgressNotifyInterval = DefaultProgressNotifyInterval
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "error"
	}
	cu, err := url.Parse(cfg.ClientURL)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: client URL: %w", err)
	}
	pu, err := url.Parse(cfg.PeerURL)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: peer URL: %w", err)
	}

	ec := embed.NewConfig()
	ec.Name = cfg.Name
	ec.Dir = cfg.DataDir
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	ec.InitialCluster = cfg.InitialCluster
	ec.ClusterState = embed.ClusterStateFlagNew
	ec.InitialClusterToken = "listwatch"
	ec.WatchProgressNotifyInterval = cfg.ProgressNotifyInterval
	ec.UnsafeNoFsync = cfg.NoFsync
	ec.LogLevel = cfg.LogLevel
	ec.LogOutputs = []string{"stderr"}
	closing := new(atomic.Bool)
	lg, err := newLogger(cfg.LogLevel, closing)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: log level: %w", err)
	}
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)
	// No metrics listener and no HTTP gateway: only gRPC for clients.
	ec.ListenMetricsUrls = nil
	ec.EnableGRPCGateway = false

	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd %s: %w", cfg.Name, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd %s: %w", cfg.Name, err)
	case <-ctx.Done():
		e.Close()
		return nil, fmt.Errorf("embedded etcd %s: not ready: %w", cfg.Name, ctx.Err())
	}
	return &Server{etcd: e, closing: closing, clientURL: cfg.ClientURL, peerURL: cfg.PeerURL, name: cfg.Name}, nil
}

// ClientURL is where clients reach the member.
func (s *Server) ClientURL() string { return s.clientURL }

// PeerURL is where the other members reach it.
func (s *Server) PeerURL() string { return s.peerURL }

// Name is the member's name.
func (s *Server) Name() string { return s.name }

// Close stops the member; its data directory stays. Idempotent.
func (s *Server) Close() {
	s.closing.Store(true)
	s.etcd.Close()
}

// Member describes one member of a cluster for StartCluster.
type Member struct {
	Name, DataDir, ClientURL, PeerURL string
}

// StartCluster starts the members of one new cluster together (or restarts
// them, if their data directories hold them) and waits until all serve.
// Members with empty URLs get free loopback ports.
func StartCluster(ctx context.Context, members []Member, tmpl Config) ([]*Server, error) {
	var peers []string
	for i := range members {
		m := &members[i]
		var err error
		if m.ClientURL == "" {
			if m.ClientURL, err = FreeURL(); err != nil {
				return nil, err
			}
		}
		if m.PeerURL == "" {
			if m.PeerURL, err = FreeURL(); err != nil {
				return nil, err
			}
		}
		peers = append(peers, m.Name+"="+m.PeerURL)
	}
	type result struct {
		i   int
		s   *Server
		err error
	}
	results := make(chan result, len(members))
	for i, m := range members {
		cfg := tmpl
		cfg.Name, cfg.DataDir, cfg.ClientURL, cfg.PeerURL = m.Name, m.DataDir, m.ClientURL, m.PeerURL
		cfg.InitialCluster = strings.Join(peers, ",")
		go func() {
			s, err := Start(ctx, cfg)
			results <- result{i, s, err}
		}()
	}
	servers := make([]*Server, len(members))
	var errs []error
	for range members {
		r := <-results
		servers[r.i] = r.s
		errs = append(errs, r.err)
	}
	if err := errors.Join(errs...); err != nil {
		for _, s := range servers {
			if s != nil {
				s.Close()
			}
		}
		return nil, err
	}
	return servers, nil
}

// ClientURLs lists the members' client URLs, for a client's endpoints.
func ClientURLs(servers []*Server) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		out[i] = s.ClientURL()
	}
	return out
}

// NewClient returns a quiet etcd client of the given endpoints.
func NewClient(endpoints []string) (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd client of %v: %w", endpoints, err)
	}
	return cli, nil
}
