package embedded

import (
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// servingFailed is what embedded etcd logs, at error level, whenever one
// of its listeners' serve loops returns (embed.(*Etcd).errHandler in
// go.etcd.io/etcd/server/v3/embed/etcd.go), including the returns its own
// Close causes: "http: Server closed", "mux: server closed", "use of
// closed network connection", each with a stack trace.
const servingFailed = "setting up serving from embedded etcd failed."

// quietStop is a zapcore.Core that drops servingFailed once Close has
// begun, so that a clean stop reads as one line (the program's own), not
// as a crash. Every other entry, and servingFailed before Close, passes.
// Kubernetes has no counterpart: kube-apiserver does not embed etcd, and
// etcd's own binary logs these lines on every clean stop.
type quietStop struct {
	zapcore.Core
	closing *atomic.Bool
}

func (q quietStop) With(fields []zapcore.Field) zapcore.Core {
	return quietStop{q.Core.With(fields), q.closing}
}

func (q quietStop) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if ent.Message == servingFailed && q.closing.Load() {
		return ce
	}
	return q.Core.Check(ent, ce)
}

// newLogger is etcd's production logger at level on stderr, through
// quietStop.
func newLogger(level string, closing *atomic.Bool) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
	}
	zc := zap.NewProductionConfig()
	zc.Level = zap.NewAtomicLevelAt(lvl)
	zc.OutputPaths, zc.ErrorOutputPaths = []string{"stderr"}, []string{"stderr"}
	return zc.Build(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return quietStop{c, closing} }))
}
